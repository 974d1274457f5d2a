import AccountsService
import Foundation
import GatewayService
import Messaging
import Support
@testable import SuiteSupport
import Testing

/// The contracts in `proto/` hold for what the code actually does.
@Suite("Contracts")
struct ContractTests {
    static var root: URL { ContractChecker.root }

    @Test("the OpenAPI document and schemas are valid, and real envelopes match the envelope schema")
    func schemas() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("envelopes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let samples = [
            Envelope(type: "test.sample-event", source: "alarms/a1", actor: "u1",
                     headers: ["traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"], payload: Data(#"{"a":1}"#.utf8)),
            Envelope(type: ReplyType.error, source: "alarms/a1", correlationId: UUIDv7.string(),
                     payload: try JSONCoding.encode(ServiceError(.scheduleInvalid, "schedule.dayOfMonth must be 0...31"))),
            Envelope(type: "system.health", occurredAt: Date(timeIntervalSince1970: 1_772_355_600.5), source: "gateway/g", payload: Data("{}".utf8)),
        ]
        var paths: [String] = []
        for (k, e) in samples.enumerated() {
            let url = dir.appendingPathComponent("\(k).json")
            try e.encoded().write(to: url)
            paths.append(url.path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, Self.root.appendingPathComponent("scripts/check_contracts.py").path] + paths
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(output)")
    }

    /// The tests' Python (the venv `make test` makes, with jsonschema and openapi-spec-validator).
    static var python: String { ContractChecker.python }

    @Test("every event type declared in code has a schema in proto/events and every event schema a type in code")
    func eventSchemasMatchCatalogues() throws {
        let declared = ContractChecker.declaredEventTypes
        let withSchema = try ContractChecker.eventSchemaTypes()
        #expect(declared.count >= 26, "\(declared.sorted())")
        #expect(declared.subtracting(withSchema).isEmpty,
                "event types declared in code without a schema in proto/events: \(declared.subtracting(withSchema).sorted())")
        #expect(withSchema.subtracting(declared).isEmpty,
                "schemas in proto/events of no event type declared in code: \(withSchema.subtracting(declared).sorted())")
        // The version each schema documents is the one the code writes and reads.
        let schemaVersions = try ContractChecker.eventSchemaVersions()
        for (type, version) in ContractChecker.declaredEventVersions {
            #expect(schemaVersions[type] == version, "\(type): version \(version) in code, x-chronir-version \(schemaVersions[type] ?? 0) in proto/events")
        }
        // The schemas are closed (the checker refuses an object open to any member).
        let (status, output) = try ContractChecker.run([])
        #expect(status == 0, "\(output)")
    }

    @Test("every event the services published matches its schema in proto/events")
    func publishedEvents() async throws {
        try await withTestSuite(label: "events", start: { s in
            try s.startCore()
            try s.startInvitations()
        }) { s in
            let owner = try await s.signup("Owner")
            let member = try await s.signup("Member")
            try await s.setTier(owner, "premium")
            let created = try await s.request(.POST, "/v1/alarms", token: owner.token, json: [
                "title": "Shared", "preAlarmOffsets": ["1d"], "schedule": scheduleJSON("weekly", day: 2)])
            let id = try #require(created.json["id"]?.stringValue)
            try await s.share(id, owner: owner, with: [member])
            #expect(try await s.request(.PATCH, "/v1/alarms/\(id)", token: owner.token, json: ["assignedTo": member.uid]).status == 200)
            _ = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: member.token, json: ["status": "completed"])
            _ = try await s.request(.POST, "/v1/alarms/\(id)/completions", token: owner.token, json: ["status": "skipped"])
            _ = try await s.request(.PUT, "/v1/me/devices/d1", token: member.token, json: ["platform": "android", "pushToken": "t"])
            _ = try await s.request(.DELETE, "/v1/me/devices/d1", token: member.token)
            _ = try await s.request(.DELETE, "/v1/alarms/\(id)", token: owner.token)
            _ = try await s.request(.POST, "/v1/auth/logout", token: owner.token)
            _ = try await s.request(.DELETE, "/v1/me", token: member.token)
            let types = try await s.checkPublishedEvents(["accounts", "alarms"])
            #expect(types.isSuperset(of: ["accounts.user-upserted", "accounts.user-deleted", "accounts.session-revoked",
                                          "accounts.device-upserted", "accounts.device-removed", "alarms.alarm-upserted",
                                          "alarms.alarm-deleted", "alarms.alarm-completed", "alarms.alarm-skipped"]), "\(types)")
        }
    }

    /// (method, path) pairs of `proto/openapi.yaml`.
    static func documentedOperations() throws -> [(String, String)] {
        let text = try String(contentsOf: root.appendingPathComponent("proto/openapi.yaml"), encoding: .utf8)
        var ops: [(String, String)] = []
        var inPaths = false
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.hasPrefix(" "), !line.isEmpty { break }
            if line.hasPrefix("  /"), line.hasSuffix(":") { current = String(line.dropFirst(2).dropLast()); continue }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let path = current, line.hasPrefix("    "), !line.hasPrefix("     "),
               ["get:", "post:", "put:", "patch:", "delete:"].contains(trimmed) {
                ops.append((String(trimmed.dropLast()).uppercased(), path))
            }
        }
        return ops
    }

    @Test("every documented operation is routed by the gateway")
    func documentedRoutesExist() async throws {
        let ops = try Self.documentedOperations()
        #expect(ops.count >= 10)
        try await withTestSuite(label: "contracts", start: { suite in
            try suite.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            // Services not started here time out fast: only "is it routed" matters.
            try suite.start("gateway", extra: ["CHRONIR_UPSTREAM_TIMEOUT": "300ms"]) { runtime, _ in
                try GatewayService.build(runtime: runtime, config: GatewayConfig(environment: runtime.environment)) { port in suite.gatewayPort.withLock { $0 = port } }
            }
        }) { s in
            for (method, path) in ops {
                let concrete = path.replacingOccurrences(of: #"\{[^}]+\}"#, with: "x", options: .regularExpression)
                let r = try await s.request(.init(rawValue: method), concrete, json: [String: Any]())
                let unrouted = r.status == 404 && (r.json["message"]?.stringValue?.hasPrefix("no such route") ?? false)
                #expect(!unrouted, "\(method) \(path) is documented but not routed")
            }
        }
    }
}
