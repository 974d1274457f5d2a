import Foundation

/// `scripts/check_contracts.py`, run from the tests: the OpenAPI document and the events'
/// JSON Schemas against what the services do.
enum ContractChecker {
    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The tests' Python (the venv `make test` makes, with jsonschema and openapi-spec-validator).
    static var python: String { ProcessInfo.processInfo.environment["CHRONIR_TEST_PYTHON"] ?? "python3" }

    /// Runs the checker with `arguments`; its exit status and output.
    static func run(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, root.appendingPathComponent("scripts/check_contracts.py").path] + arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
