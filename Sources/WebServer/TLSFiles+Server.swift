import NIOSSL

extension WebConfiguration.TLSFiles {
    /// The problem with the files' contents, naming the key to fix (`web.tls_certificate`, `web.tls_key`).
    ///
    /// Nil when they make a server configuration.
    public func problem() -> (key: String, message: String)? {
        do {
            _ = try certificates()
        } catch {
            return ("web.tls_certificate", "\(certificate) holds no PEM certificate NIOSSL can read (\(error))")
        }
        do {
            _ = try NIOSSLPrivateKey(bytes: keyPEM, format: .pem)
        } catch {
            return ("web.tls_key", "\(key) holds no PEM private key NIOSSL can read (\(error))")
        }
        return nil
    }

    /// The TLS configuration of a server with this certificate chain and key.
    func serverConfiguration() throws -> TLSConfiguration {
        let key = try NIOSSLPrivateKey(bytes: keyPEM, format: .pem)
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: try certificates().map { .certificate($0) },
            privateKey: .privateKey(key)
        )
    }

    private func certificates() throws -> [NIOSSLCertificate] {
        let chain = try NIOSSLCertificate.fromPEMBytes(certificatePEM)
        guard !chain.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
        return chain
    }
}
