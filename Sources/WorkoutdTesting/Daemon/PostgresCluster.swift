import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster for a test.
///
/// Debian's `initdb` and `pg_ctl` into a temporary directory, listening on 127.0.0.1 at a free port and on a unix
/// socket in that directory.
///
/// initdb refuses to run as root, so as root the cluster belongs to `nobody`. Role `workoutd` (password
/// ``password``) owns database `gym`; TCP connections authenticate with SCRAM, the socket trusts the superuser
/// that ``psql(_:)`` uses to look at what arrived.
public final class PostgresCluster: @unchecked Sendable {
    public static let password = "gym-secret"
    public let directory: String
    public let port: Int
    let binDirectory: String
    private let owner: String?

    public init() throws {
        binDirectory = try Self.findBinaries()
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("wd-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        owner = getuid() == 0 ? "nobody" : nil
        if let owner, let account = getpwnam(owner) {
            chown(directory, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        port = try Self.freePort()
        let passwordFile = directory + "/superuser-password"
        try "postgres\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        if let owner, let account = getpwnam(owner) {
            chown(passwordFile, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        try run(
            binDirectory + "/initdb",
            [
                "-D", directory + "/data", "-U", "postgres", "--pwfile", passwordFile,
                "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8",
            ]
        )
        try start()
        try psql("CREATE ROLE workoutd LOGIN PASSWORD '\(Self.password)'", database: "postgres")
        try psql("CREATE DATABASE gym OWNER workoutd", database: "postgres")
    }

    /// A streaming standby of `primary` on a port of its own.
    ///
    /// `pg_basebackup -R` copies the primary over its socket and writes the `primary_conninfo` that makes the copy follow
    /// it; the same role, password and database then exist here. Read-only until ``promote()``.
    public init(standbyOf primary: PostgresCluster) throws {
        binDirectory = primary.binDirectory
        owner = primary.owner
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("wd-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let owner, let account = getpwnam(owner) {
            chown(directory, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        port = try Self.freePort()
        try run(
            binDirectory + "/pg_basebackup",
            [
                "-D", directory + "/data", "-R", "-X", "stream", "-c", "fast", "--no-sync", "-h", primary.directory,
                "-p", "\(primary.port)", "-U", "postgres",
            ]
        )
        try start()
    }

    /// Makes a standby the primary (`pg_ctl promote`), waiting until it takes writes.
    public func promote() throws {
        try run(binDirectory + "/pg_ctl", ["-D", directory + "/data", "-w", "-t", "60", "promote"])
    }

    /// Commits wait until a standby has the WAL on disk (`synchronous_standby_names = '*'`).
    ///
    /// What a commit acknowledged then survives the primary's crash and the standby's promotion.
    public func requireSynchronousStandby() throws {
        try psql("ALTER SYSTEM SET synchronous_standby_names = '*'", database: "postgres")
        try psql("SELECT pg_reload_conf()", database: "postgres")
    }

    /// The URL a hub uses; `sslmode` defaults to `disable` (the test server offers no TLS).
    public func url(user: String = "workoutd", sslmode: String = "disable") -> String {
        "postgresql://\(user)@127.0.0.1:\(port)/gym?sslmode=\(sslmode)"
    }

    /// A file holding the role's password, for `replication.password_file` (0600: the daemon refuses more).
    public func writePasswordFile(
        in directory: String,
        password: String = PostgresCluster.password,
        mode: mode_t = 0o600
    ) throws -> String {
        let path = directory + "/pg-password"
        try (password + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    /// Turns TLS on with a self-signed certificate for `localhost` and 127.0.0.1.
    ///
    /// The certificate is made now with openssl in the cluster's directory. Returns its path (the CA a hub names with
    /// `sslrootcert`).
    @discardableResult
    public func enableTLS() throws -> String {
        let certificate = directory + "/server.crt"
        let key = directory + "/server.key"
        // Run as the cluster's owner, so the server may read the key, which openssl writes 0600.
        try run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", certificate,
            ]
        )
        chmod(key, 0o600)
        try psql("ALTER SYSTEM SET ssl_cert_file = '\(certificate)'", database: "postgres")
        try psql("ALTER SYSTEM SET ssl_key_file = '\(key)'", database: "postgres")
        try psql("ALTER SYSTEM SET ssl = on", database: "postgres")
        try psql("SELECT pg_reload_conf()", database: "postgres")
        return certificate
    }

    /// TCP connections authenticate with `method` from now on, and every authorized one is logged.
    ///
    /// `method` is `scram-sha-256`, `md5` or `password` (cleartext); the log line is `connection authorized: user=…` in
    /// ``serverLog``.
    public func setHostAuthentication(_ method: String) throws {
        let path = directory + "/data/pg_hba.conf"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("host") else { return String(line) }
            var fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            fields[fields.count - 1] = method
            return fields.joined(separator: " ")
        }
        try lines.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        // The role's password is stored as a SCRAM secret: `password` checks the cleartext against it, and
        // `md5` answers with SCRAM instead (an MD5 request needs an MD5-stored password).
        try psql("ALTER SYSTEM SET log_connections = on", database: "postgres")
        try psql("SELECT pg_reload_conf()", database: "postgres")
    }

    public func start() throws {
        try run(
            binDirectory + "/pg_ctl",
            [
                "-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60",
                "-o", "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100",
                "start",
            ]
        )
    }

    /// Stops the server; `immediate` is a crash from the clients' point of view.
    public func stop(immediate: Bool = false) throws {
        try run(
            binDirectory + "/pg_ctl",
            ["-D", directory + "/data", "-w", "-t", "60", "-m", immediate ? "immediate" : "fast", "stop"]
        )
    }

    /// Runs `sql` as the superuser and returns psql's unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String = "gym") throws -> String {
        try capture(
            binDirectory + "/psql",
            [
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", "\(port)", "-U", "postgres", "-d", database,
                "-At", "-c", sql,
            ]
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A single integer from `sql`.
    public func count(_ sql: String) throws -> Int {
        let text = try psql(sql)
        guard let value = Int(text) else { throw TestingError("psql returned '\(text)' for \(sql)") }
        return value
    }

    public var serverLog: String { (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "" }

    deinit {
        try? stop(immediate: true)
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Processes

    private func run(_ executable: String, _ arguments: [String]) throws {
        // pg_ctl's own output says nothing useful once it succeeded.
        _ = try capture(executable, arguments)
    }

    /// Runs a PostgreSQL program as the cluster's owner; throws with its output when it fails.
    ///
    /// posix_spawn and waitpid rather than Foundation's Process: `pg_ctl start` leaves the server running
    /// with the output file open, and Process.waitUntilExit was seen never to return then.
    func capture(_ executable: String, _ arguments: [String]) throws -> String {
        let argv = (owner.map { ["/usr/sbin/runuser", "-u", $0, "--", executable] } ?? [executable]) + arguments
        let output = directory + "/cmd-\(UUID().uuidString.prefix(8)).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Test threads (dispatch workers) block every signal and posix_spawn passes the mask on; a postmaster
        // with SIGUSR1/SIGCHLD blocked starts badly and its backends hang on their latches.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, environ)
        guard spawned == 0 else { throw TestingError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS are macros Swift does not import.
        let exited = status & 0x7f == 0
        guard exited && (status >> 8) & 0xff == 0 else {
            throw TestingError(
                "\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)"
            )
        }
        return text
    }

    private static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init)
            .sorted()
        guard let version = versions.last, FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb")
        else {
            throw TestingError(
                "PostgreSQL is not installed (apt-get install postgresql): no \(root)/<version>/bin/initdb"
            )
        }
        return "\(root)/\(version)/bin"
    }

    /// A TCP port nothing listens on right now (bound to port 0, then released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestingError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw TestingError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
