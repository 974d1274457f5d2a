import Foundation
import Persistence
import Support
import Testing

/// The positive marker a test waits for before it asserts that nothing more happened: everything
/// set in motion has had its chance. A fixed sleep proves nothing on a slow machine; these read
/// where each stream stands in the database instead.
extension TestSuite {
    /// The streams each service consumes into its own schema, checkpointed in that schema's
    /// `consumer_checkpoints` (the gateway keeps its positions in memory). Mirrors the
    /// `makeSubscriber` / `makePushedSubscriber` calls of `Services/*/Sources/*Service.swift`
    /// (alarms reads its own stream back for analytics, on unless `CHRONIR_ANALYTICS=off`).
    static let consumedStreams: [String: [String]] = [
        "accounts": ["billing"],
        "alarms": ["accounts", "scheduler", "invitations", "billing", "alarms"],
        "scheduler": ["alarms"],
        "notifications": ["scheduler", "accounts", "invitations"],
        "invitations": ["accounts", "alarms"],
        "billing": ["accounts"],
    ]

    /// What has not had its chance yet, among the services this suite started, in the order
    /// work flows: scheduler timers already due, outbox rows not yet sequenced, consumers whose
    /// checkpoint is behind their producer's head, and (with `deliveries`) pushes still pending.
    /// Empty once everything settled.
    func unsettled(deliveries: Bool = true) async -> [String] {
        let names = Set(running.withLock { $0.map(\.name) })
        do {
            return try await inDatabase("public") { db in
                var left: [String] = []
                if names.contains("scheduler") {
                    let due = try await db.query("SELECT count(*)::int FROM scheduler.timers WHERE due_at <= now()").first(Int.self) ?? 0
                    if due > 0 { left.append("scheduler: \(due) timer(s) due and not fired") }
                }
                let producers = Set(Self.consumedStreams.values.joined()).filter { names.contains($0) }.sorted()
                for producer in producers {
                    let unsequenced = try await db.query("SELECT count(*)::int FROM \(unescaped: producer).outbox WHERE seq IS NULL")
                        .first(Int.self) ?? 0
                    if unsequenced > 0 { left.append("\(producer): \(unsequenced) outbox row(s) not yet sequenced") }
                }
                for consumer in Self.consumedStreams.keys.sorted() where names.contains(consumer) {
                    for stream in Self.consumedStreams[consumer] ?? [] where names.contains(stream) {
                        let head = try await db.query("""
                            SELECT coalesce(max(last_seq), 0)::int FROM \(unescaped: stream).outbox_streams WHERE stream = \(stream)
                            """).first(Int.self) ?? 0
                        let at = try await db.query("""
                            SELECT coalesce(max(seq), 0)::int FROM \(unescaped: consumer).consumer_checkpoints WHERE stream = \(stream)
                            """).first(Int.self) ?? 0
                        if at < head { left.append("\(consumer) on \(stream): checkpoint \(at) of head \(head)") }
                    }
                }
                if deliveries && names.contains("notifications") {
                    let pending = try await db.query("SELECT count(*)::int FROM notifications.deliveries WHERE state = 'pending'")
                        .first(Int.self) ?? 0
                    if pending > 0 { left.append("notifications: \(pending) delivery(ies) pending") }
                }
                return left
            }
        } catch {
            return ["cannot read the stream positions: \(error)"]
        }
    }

    /// Waits until the alarms service holds `tier` for `user` (it applies tiers from the
    /// accounts and billing streams); false after `timeout`.
    func alarmsTier(of user: TestUser, is tier: String, timeout: Duration = .seconds(20)) async -> Bool {
        await eventually(timeout: timeout) {
            let held = try? await inDatabase("alarms") {
                try await $0.query("SELECT tier FROM user_tiers WHERE user_id = \(user.uid)").first(String.self)
            }
            return held == tier
        }
    }

    /// Waits until ``unsettled(deliveries:)`` is empty on two reads in a row (so a step that was
    /// between two checks of one read is seen on the next); records an issue naming what stayed
    /// behind when it does not within `timeout`. Call it before asserting that nothing more
    /// arrived: every consumer caught up with its producer is the proof that whatever could have
    /// doubled has had its chance.
    func settle(timeout: Duration = .seconds(30), deliveries: Bool = true,
                sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = ContinuousClock.now + timeout
        var clean = 0
        while true {
            let left = await unsettled(deliveries: deliveries)
            clean = left.isEmpty ? clean + 1 : 0
            if clean >= 2 { return }
            if ContinuousClock.now >= deadline {
                if left.isEmpty { return }
                Issue.record("the suite did not settle within \(timeout): \(left.joined(separator: "; "))", sourceLocation: sourceLocation)
                return
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}
