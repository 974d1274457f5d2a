import AccountsService
import Foundation
import GatewayService
import Messaging
import Support
import Testing

extension TestSuite {
    /// Checks every event that `schemas`' services wrote to their outboxes against its schema in
    /// `proto/events` (a published type without a schema fails too); returns the types seen.
    @discardableResult
    func checkPublishedEvents(_ schemas: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Set<String> {
        var lines: [String] = []
        for schema in schemas {
            lines += try await withDatabase(url: databaseURL, schema: schema) {
                try await $0.query("SELECT envelope FROM outbox ORDER BY id").all(String.self)
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).jsonl")
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let (status, output) = try ContractChecker.run(["--require-event-schemas", file.path])
        #expect(status == 0, "\(output)", sourceLocation: sourceLocation)
        #expect(output.contains("contracts ok (\(lines.count) envelopes)"), "\(output)", sourceLocation: sourceLocation)
        return Set(try lines.map { try Envelope.decode(Data($0.utf8)).type })
    }
}
