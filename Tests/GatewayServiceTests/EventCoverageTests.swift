import BillingService
import Contracts
import Foundation
import InvitationsService
import Messaging
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// Every event type the code declares (the streams' catalogues in `Contracts`) is produced here
/// at least once, by the real services, and every event they published matches its closed
/// schema in `proto/events`. A type added to a catalogue without a schema, or that nothing here
/// produces, fails this test by name: give it a schema and a step below.
@Suite("Event coverage")
struct EventCoverageTests {
    /// An annual schedule whose occurrence is five to seven months away: its warnings are all
    /// ahead, and nothing of it comes due unless a test moves a timer.
    static func farSchedule() -> [String: Any] {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let month = (utc.component(.month, from: Date()) + 5) % 12 + 1
        return ["type": "annual", "month": month, "dayOfMonthAnnual": 15, "timeOfDay": "09:00", "timezone": "UTC",
                "startDate": "2026-01-01T00:00:00Z"]
    }

    func alarm(_ s: TestSuite, _ u: TestUser, _ body: [String: Any]) async throws -> String {
        var json: [String: Any] = ["schedule": Self.farSchedule()]
        json.merge(body) { $1 }
        let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: json)
        #expect(r.status == 201, "\(r.text)")
        return try #require(r.json["id"]?.stringValue, "\(r.text)")
    }

    func invite(_ s: TestSuite, _ u: TestUser, _ body: [String: Any]) async throws -> String {
        let r = try await s.request(.POST, "/v1/invitations", token: u.token, json: body)
        #expect(r.status == 201, "\(r.text)")
        return try #require(r.json["id"]?.stringValue, "\(r.text)")
    }

    @Test("every event type declared in code is published at least once, and every published event matches its closed schema")
    func everyEventType() async throws {
        let declared = ContractChecker.declaredEventTypes
        let withSchema = try ContractChecker.eventSchemaTypes()
        #expect(declared.subtracting(withSchema).isEmpty,
                "event types declared in code without a schema in proto/events: \(declared.subtracting(withSchema).sorted())")
        #expect(withSchema.subtracting(declared).isEmpty,
                "schemas in proto/events of no event type declared in code: \(withSchema.subtracting(declared).sorted())")

        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let signer = try StoreSigner()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coverage-root-\(UUID().uuidString).pem").path
        try signer.rootPEM.write(toFile: root, atomically: true, encoding: .utf8)
        try await withTestSuite(label: "coverage", start: { s in
            try s.startCore()
            // A fire is announced 20 s ahead of its instant: time to withdraw one before it rings.
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16", "CHRONIR_FIRE_LEAD": "20s"], build: SchedulerService.build)
            try s.startNotifications(push)
            try s.start("invitations", migrations: InvitationsService.migrations,
                        extra: ["CHRONIR_INVITATIONS_PER_HOUR": "1000", "CHRONIR_INVITATION_SWEEP": "200ms"], build: InvitationsService.build)
            try s.start("billing", migrations: BillingService.migrations, extra: ["CHRONIR_APPLE_ROOT_CA_FILE": root], build: BillingService.build)
        }) { s in
            // accounts.user-upserted
            let owner = try await s.signup("Owner")
            let member = try await s.signup("Member")
            let invitee = try await s.signup("Invitee")
            try await s.setTier(owner, "premium")

            // accounts.device-upserted, accounts.device-removed
            let device = try await s.request(.PUT, "/v1/me/devices/phone", token: member.token, json: ["platform": "android", "pushToken": "fcm-ok"])
            #expect(device.status == 200 || device.status == 201, "\(device.text)")
            #expect(try await s.request(.DELETE, "/v1/me/devices/phone", token: member.token).status == 204)

            // alarms.alarm-upserted; scheduler.pre-alarm-due (its 1-day warning made due now);
            // scheduler.occurrence-missed and alarms.alarm-missed (its missed check made due now).
            let warned = try await alarm(s, owner, ["title": "Warned", "preAlarmOffsets": ["1d"]])
            try await s.makeDueNow(warned, kind: "pre")
            #expect(await s.awaitPublished(SchedulerEvents.preAlarmDue), "no pre-alarm warning fired")
            try await s.makeDueNow(warned, kind: "missed")
            #expect(await s.awaitPublished(SchedulerEvents.occurrenceMissed), "no missed check fired")
            #expect(await s.awaitPublished(AlarmsEvents.alarmMissed), "the alarms service logged no missed occurrence")

            // alarms.alarm-completed and scheduler.completion-push (a member completes a shared
            // alarm: the owner is told); alarms.alarm-skipped.
            let shared = try await alarm(s, owner, ["title": "Shared"])
            try await s.share(shared, owner: owner, with: [member])
            let done = try await s.request(.POST, "/v1/alarms/\(shared)/completions", token: member.token, json: ["status": "completed"])
            #expect(done.status == 201, "\(done.text)")
            #expect(await s.awaitPublished(SchedulerEvents.completionPush), "no completion push for the shared alarm")
            let skipped = try await s.request(.POST, "/v1/alarms/\(shared)/completions", token: owner.token, json: ["status": "skipped"])
            #expect(skipped.status == 201, "\(skipped.text)")

            // scheduler.alarm-fired, announced ahead of its instant; notifications holds it.
            // Deleted before the instant: alarms.alarm-deleted, scheduler.fire-withdrawn,
            // notifications.notification-withdrawn.
            let withdrawn = try await alarm(s, owner, ["title": "Withdrawn"])
            let due = try await s.dueIn(withdrawn, seconds: 18)
            #expect(await eventually(timeout: .seconds(10)) { (try? await s.firedAt(withdrawn)) != nil }, "the fire was not announced ahead")
            let waiting = await eventually(timeout: .seconds(10)) {
                let n = try? await s.inDatabase("notifications") {
                    try await $0.query("SELECT count(*)::int FROM inbox WHERE data->>'alarmId' = \(withdrawn)").first(Int.self)
                }
                return (n ?? 0) > 0
            }
            #expect(waiting, "notifications does not hold the announced fire")
            #expect(Date() < due.addingTimeInterval(-2), "too slow to withdraw the fire before its instant")
            #expect(try await s.request(.DELETE, "/v1/alarms/\(withdrawn)", token: owner.token).status == 204)
            #expect(await s.awaitPublished(SchedulerEvents.fireWithdrawn), "the announced fire was not withdrawn")
            #expect(await s.awaitPublished(NotificationsEvents.notificationWithdrawn), "notifications withdrew nothing")

            // alarms.alarm-snoozed: a snooze is for an occurrence that has come; this one comes
            // now, as far as the alarms service knows.
            let snoozed = try await alarm(s, owner, ["title": "Snoozed"])
            _ = try await s.inDatabase("alarms") {
                try await $0.query("UPDATE alarms SET next_fire_date = date_trunc('milliseconds', now()) WHERE id = \(snoozed)").drain()
            }
            let snooze = try await s.request(.POST, "/v1/alarms/\(snoozed)/snooze", token: owner.token, json: ["minutes": 10])
            #expect(snooze.status == 200, "\(snooze.text)")

            // accounts.group-upserted; invitations.invitation-created and -accepted (a link to the
            // group, accepted); accounts.group-deleted.
            let created = try await s.request(.POST, "/v1/groups", token: owner.token, json: ["name": "Household", "iconName": "house"])
            #expect(created.status == 201, "\(created.text)")
            let group = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let link = try await invite(s, owner, ["type": "group", "referenceId": group])
            let accepted = try await s.request(.POST, "/v1/invitations/\(link)/accept", token: member.token)
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect(try await s.request(.DELETE, "/v1/groups/\(group)", token: owner.token).status == 204)

            // invitations.invitation-declined (a direct invitation to an alarm), -revoked (by the
            // inviter), -expired (past its expiry: the sweeper marks it).
            let direct = try await invite(s, owner, ["type": "alarm", "referenceId": warned, "inviteeEmail": invitee.email])
            let declined = try await s.request(.POST, "/v1/invitations/\(direct)/decline", token: invitee.token)
            #expect(declined.status == 200, "\(declined.text)")
            let revocable = try await invite(s, owner, ["type": "alarm", "referenceId": warned])
            let revoked = try await s.request(.DELETE, "/v1/invitations/\(revocable)", token: owner.token)
            #expect(revoked.status == 200 || revoked.status == 204, "\(revoked.text)")
            let expiring = try await invite(s, owner, ["type": "alarm", "referenceId": warned])
            _ = try await s.inDatabase("invitations") {
                try await $0.query("UPDATE invitations SET expires_at = now() - interval '1 second' WHERE code = \(expiring)").drain()
            }
            #expect(await s.awaitPublished(InvitationsEvents.expired), "the expiry sweeper expired nothing")

            // billing.entitlement-changed: a signed App Store transaction.
            let buyer = try await s.signup("Buyer")
            let transaction = TestTransaction(original: "9000001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            let bought = try await s.request(.POST, "/v1/subscriptions/apple", token: buyer.token,
                                             json: ["signedTransaction": try await signer.sign(transaction)])
            #expect(bought.status == 200, "\(bought.text)")

            // accounts.session-revoked (a logout), accounts.user-deleted.
            let leaver = try await s.signup("Leaver")
            #expect(try await s.request(.POST, "/v1/auth/logout", token: buyer.token).status == 204)
            #expect(try await s.request(.DELETE, "/v1/me", token: leaver.token).status == 204)

            // Everything reached its outbox (consumers' events come a little later)…
            let streams = ContractChecker.eventStreams
            var seen = Set<String>()
            _ = await eventually(timeout: .seconds(20), every: .milliseconds(200)) {
                for stream in streams { seen.formUnion((try? await s.outboxTypes(stream)) ?? []) }
                return seen.isSuperset(of: declared)
            }
            // …and every event published matches its closed schema; every type with a schema
            // was published (the checker names any missing).
            let types = try await s.checkPublishedEvents(streams, requireAllTypes: true)
            #expect(declared.subtracting(types).isEmpty, "event types declared in code that nothing here produced: \(declared.subtracting(types).sorted())")
            #expect(types.subtracting(declared).isEmpty, "events published of types no catalogue declares: \(types.subtracting(declared).sorted())")
        }
    }
}

extension TestSuite {
    /// Waits until the scheduler holds a timer of `kind` (`pre`, `missed`, …) for the alarm,
    /// then makes it due now (a new row, which the wheel's loader picks up).
    fileprivate func makeDueNow(_ alarmId: String, kind: String) async throws {
        let ok = await eventually(timeout: .seconds(10)) {
            let n = try? await inDatabase("scheduler") {
                try await $0.query("SELECT count(*)::int FROM timers WHERE alarm_id = \(alarmId) AND kind = \(kind)").first(Int.self)
            }
            return (n ?? 0) > 0
        }
        if !ok { throw TestSetupError("the scheduler has no \(kind) timer for \(alarmId)") }
        _ = try await inDatabase("scheduler") {
            try await $0.query("""
                WITH old AS (DELETE FROM timers WHERE alarm_id = \(alarmId) AND kind = \(kind) RETURNING *)
                INSERT INTO timers (partition, alarm_id, kind, occurrence_at, due_at, offset_minutes, snooze_count)
                SELECT partition, alarm_id, kind, occurrence_at, now(), offset_minutes, snooze_count FROM old
                """).drain()
        }
    }
}
