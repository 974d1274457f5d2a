import AccountsService
import Foundation
import GatewayService
import Messaging
import Support
import Testing

extension TestSuite {
    /// Checks every event that `schemas`' services wrote to their outboxes against its closed
    /// schema in `proto/events` (a published type without a schema fails too); returns the
    /// types seen. `requireAllTypes`: every event type with a schema in `proto/events` must be
    /// among them, or the check fails naming the ones missing.
    @discardableResult
    func checkPublishedEvents(_ schemas: [String], requireAllTypes: Bool = false,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws -> Set<String> {
        var lines: [String] = []
        for schema in schemas {
            lines += try await inDatabase(schema) {
                try await $0.query("SELECT envelope FROM outbox ORDER BY id").all(String.self)
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).jsonl")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let (status, output) = try ContractChecker.run(["--require-event-schemas"] + (requireAllTypes ? ["--require-all-types"] : []) + [file.path])
        #expect(status == 0, "\(output)", sourceLocation: sourceLocation)
        #expect(output.contains("contracts ok (\(lines.count) envelopes)"), "\(output)", sourceLocation: sourceLocation)
        return Set(try lines.map { try Envelope.decode(Data($0.utf8)).type })
    }

    /// The event types in the outbox of `schema` (a service's database schema) so far.
    func outboxTypes(_ schema: String) async throws -> Set<String> {
        Set(try await inDatabase(schema) {
            try await $0.query("SELECT DISTINCT type FROM outbox").all(String.self)
        })
    }

    /// Waits until an event of `event`'s type is in its stream's outbox (the stream is the
    /// type's first part, `scheduler.pre-alarm-due` → `scheduler`); whether one came.
    func awaitPublished(_ event: any EventType, timeout: Duration = .seconds(20)) async -> Bool {
        let type = event.type
        let stream = String(type.prefix { $0 != "." })
        return await eventually(timeout: timeout, every: .milliseconds(100)) {
            (try? await outboxTypes(stream))?.contains(type) ?? false
        }
    }
}
