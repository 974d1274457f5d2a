import Contracts
import Foundation
import Messaging

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

    /// The event catalogues of the streams (`Contracts`): every event type the code declares.
    /// A new stream's catalogue is added here; `EventCoverageTests` then requires each of its types.
    static var catalogues: [(stream: String, types: [any EventType])] {
        [(AccountsEvents.stream, AccountsEvents.all), (AlarmsEvents.stream, AlarmsEvents.all),
         (SchedulerEvents.stream, SchedulerEvents.all), (NotificationsEvents.stream, NotificationsEvents.all),
         (InvitationsEvents.stream, InvitationsEvents.all), (BillingEvents.stream, BillingEvents.all)]
    }

    /// Every event type declared in code.
    static var declaredEventTypes: Set<String> { Set(catalogues.flatMap { $0.types.map(\.type) }) }

    /// The streams of ``catalogues``: each is the database schema whose outbox holds its events.
    static var eventStreams: [String] { catalogues.map { $0.stream } }

    /// The event types with a schema in `proto/events` (`<type>.schema.json`; the shared parts,
    /// `alarm-state` and `schedule`, have no dot in their names and are no event types).
    /// Each declared event type and the payload version this build writes.
    static var declaredEventVersions: [String: Int] {
        Dictionary(catalogues.flatMap { $0.types.map { ($0.type, $0.version) } }, uniquingKeysWith: max)
    }

    /// Each event type's `x-chronir-version` in `proto/events` (1 when absent).
    static func eventSchemaVersions() throws -> [String: Int] {
        var out: [String: Int] = [:]
        for type in try eventSchemaTypes() {
            let data = try Data(contentsOf: root.appendingPathComponent("proto/events/\(type).schema.json"))
            let doc = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            out[type] = doc?["x-chronir-version"] as? Int ?? 1
        }
        return out
    }

    static func eventSchemaTypes() throws -> Set<String> {
        let suffix = ".schema.json"
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("proto/events").path)
        return Set(names.filter { $0.hasSuffix(suffix) }.map { String($0.dropLast(suffix.count)) }.filter { $0.contains(".") })
    }
}
