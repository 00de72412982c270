import Foundation
import Testing

/// The generated sources are checked in (`make openapi`).
///
/// An OpenAPI document changed without regenerating them shows here, as an operation or a path the generated server
/// does not register.
@Suite struct OpenAPIContractTests {
    static let webAPI = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../Sources/WebAPI"
    ).standardized

    @Test func everyOperationOfTheDocumentIsGenerated() throws {
        let document = try String(contentsOf: Self.webAPI.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        let server = try String(
            contentsOf: Self.webAPI.appendingPathComponent("Generated/Server.swift"),
            encoding: .utf8
        )
        let operations = document.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return trimmed.hasPrefix("operationId:")
                ? trimmed.dropFirst("operationId:".count).trimmingCharacters(in: .whitespaces) : nil
        }
        let paths = document.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("  /") && line.hasSuffix(":") ? String(line.dropFirst(2).dropLast()) : nil
        }
        #expect(operations.count == 7)
        #expect(paths.count == operations.count)
        for operation in operations {
            #expect(server.contains("func \(operation)(") || server.contains("server.\(operation)"), "\(operation)")
        }
        for path in paths {
            #expect(server.contains("path: server.apiPathComponentsWithServerPrefix(\"\(path)\")"), "\(path)")
        }
    }
}
