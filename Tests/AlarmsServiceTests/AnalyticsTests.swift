@testable import AlarmsService
import BillingService
import Contracts
import Foundation
import InvitationsService
import Messaging
import PostgresNIO
import SchedulerService
import Support
@testable import SuiteSupport
import Testing

/// Product analytics (US-13.1): server events derived from the streams, client events through
/// the API, pseudonyms instead of uids, the operator's report, and deletion.
@Suite("Analytics")
struct AnalyticsTests {
    /// Rows of `alarms.analytics_*` whose text holds `needle`.
    /// Waits until midnight UTC has passed when it is less than `seconds` away.
    static func awayFromMidnight(by seconds: Double) async throws {
        let now = Date()
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let midnight = utc.startOfDay(for: now).addingTimeInterval(86_400)
        let left = midnight.timeIntervalSince(now)
        if left < seconds { try await Task.sleep(for: .seconds(left + 1)) }
    }

    static func mentions(_ needle: String, in url: String) async throws -> Int {
        try await withDatabase(url: url, schema: "alarms") { db in
            try await db.query("""
                SELECT (SELECT count(*) FROM analytics_events e WHERE e::text LIKE '%' || \(needle) || '%')
                     + (SELECT count(*) FROM analytics_users u WHERE u::text LIKE '%' || \(needle) || '%')
                """).first(Int.self) ?? -1
        }
    }

    @Test("every US-13.1 event is derived from the streams or accepted from clients, under a pseudonym; the report counts them; deletion forgets the user")
    func derivedAndReported() async throws {
        // Everything below happens "today" (UTC) and the report's last day must be that day: a
        // run that would cross midnight (it takes about a minute) starts after it instead.
        try await Self.awayFromMidnight(by: 150)
        let signer = try StoreSigner()
        let root = try signer.rootFile()
        try await withTestSuite(label: "analytics", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PUSH_TO": "alarms", "CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
            try s.start("invitations", migrations: InvitationsService.migrations, build: InvitationsService.build)
            try s.start("billing", migrations: BillingService.migrations, extra: ["CHRONIR_APPLE_ROOT_CA_FILE": root], build: BillingService.build)
        }) { s in
            let a = try await s.signup("Analyst")
            let b = try await s.signup("Bystander")
            // Both agree to analytics (US-13.1: nothing is derived without it), and the alarms
            // service knows before they act.
            for u in [a, b] {
                #expect(try await s.request(.PATCH, "/v1/me", token: u.token, json: ["analyticsConsent": true]).status == 200)
            }
            #expect(await eventually {
                let n = try? await s.inDatabase("alarms") {
                    try await $0.query("SELECT count(*)::int FROM analytics_consent").first(Int.self)
                }
                return n == 2
            })
            // An upgrade through the store (billing's entitlement event), then Premium by the operator.
            let txn = TestTransaction(original: "4000001", productId: "com.chronir.plus.monthly", expires: Date().addingTimeInterval(3600))
            #expect(try await s.request(.POST, "/v1/subscriptions/apple", token: a.token,
                                        json: ["signedTransaction": try await signer.sign(txn)]).status == 200)
            #expect(await eventually { (try? await s.request(.GET, "/v1/me", token: a.token))?.json["tier"]?.stringValue == "plus" })
            _ = try await s.setTier(a, "premium")

            // An alarm ringing at the next whole minute; another that is deleted.
            var due = (Date().timeIntervalSince1970 / 60).rounded(.up) * 60
            if due - Date().timeIntervalSince1970 < 8 { due += 60 }
            let hm = ISOTime.format(Date(timeIntervalSince1970: due)).dropFirst(11).prefix(5)
            let created = try await s.request(.POST, "/v1/alarms", token: a.token, json: [
                "title": "Secret title", "note": "secret note", "schedule": scheduleJSON("custom", day: 1, time: String(hm))])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let gone = try await s.request(.POST, "/v1/alarms", token: a.token, json: ["title": "Short-lived", "schedule": scheduleJSON("annual", day: 3)])
            let goneId = try #require(gone.json["id"]?.stringValue)
            #expect(try await s.request(.DELETE, "/v1/alarms/\(goneId)", token: a.token).status == 204)
            // A share begins with an invitation.
            #expect(try await s.request(.POST, "/v1/invitations", token: a.token,
                                        json: ["type": "alarm", "referenceId": id, "inviteeEmail": b.email]).status == 201)

            // Client events: accepted when well-formed, refused naming what is wrong.
            let sent = try await s.request(.POST, "/v1/analytics/events", token: b.token, json: ["events": [
                ["name": "onboarding_completed", "properties": ["step": "presets"]],
                ["name": "upgrade_prompt_shown", "properties": ["trigger": "third_alarm", "tier": "free"]],
            ]])
            #expect(sent.status == 202 && sent.json["accepted"]?.intValue == 2, "\(sent.text)")
            let serverOnly = try await s.request(.POST, "/v1/analytics/events", token: b.token, json: ["events": [["name": "alarm_created"]]])
            #expect(serverOnly.status == 400 && serverOnly.text.contains("events[0].name"), "\(serverOnly.text)")
            let personal = try await s.request(.POST, "/v1/analytics/events", token: b.token,
                                               json: ["events": [["name": "alarm_dismissed", "properties": ["email": a.email]]]])
            #expect(personal.status == 400 && personal.text.contains("properties.email"), "\(personal.text)")
            let tooMany = try await s.request(.POST, "/v1/analytics/events", token: b.token,
                                              json: ["events": Array(repeating: ["name": "onboarding_completed"], count: 101)])
            #expect(tooMany.status == 400)
            #expect(try await s.request(.POST, "/v1/analytics/events", json: ["events": []]).status == 401)

            // The fire, then a snooze and a completion of it.
            #expect(await eventually(timeout: .seconds(80), every: .milliseconds(250)) {
                (try? await s.request(.GET, "/v1/alarms/\(id)", token: a.token))?.json["lastFiredDate"]?.stringValue != nil
            }, "the alarm did not fire")
            // Fires are announced ahead of their instant; a snooze waits for the instant itself.
            try await Task.sleep(for: .seconds(max(0, due - Date().timeIntervalSince1970 + 1)))
            let snoozed = try await s.request(.POST, "/v1/alarms/\(id)/snooze", token: a.token, json: ["minutes": 10])
            #expect(snoozed.status == 200, "\(snoozed.text)")
            #expect(try await s.request(.POST, "/v1/alarms/\(id)/completions", token: a.token, json: ["status": "completed"]).status == 201)
            let dismissed = try await s.request(.POST, "/v1/analytics/events", token: a.token, json: ["events": [
                ["name": "alarm_dismissed", "properties": ["timeToDismissSeconds": 12, "intervalType": "custom"]]]])
            #expect(dismissed.status == 202, "\(dismissed.text)")

            // The report: every event, two active users today, the upgrade path.
            var report: AnalyticsReport?
            var failure = ""
            let expected: Set<String> = ["alarm_created", "alarm_fired", "alarm_snoozed", "alarm_completed", "alarm_deleted",
                                         "upgrade_completed", "share_initiated", "upgrade_prompt_shown", "onboarding_completed", "alarm_dismissed"]
            #expect(await eventually(timeout: .seconds(15)) {
                do { report = try await s.rpc(.alarms, AnalyticsMethods.Report.self, .init(days: 7)) } catch { failure = "\(error)" }
                return Set(report?.usage.map(\.event) ?? []) == expected
            }, "usage: \(String(describing: report?.usage)) \(failure)")
            let r = try #require(report)
            let usage = Dictionary(uniqueKeysWithValues: r.usage.map { ($0.event, $0) })
            #expect(usage["alarm_created"]?.count == 2 && usage["alarm_created"]?.users == 1)
            #expect(usage["alarm_fired"]?.count == 1)
            #expect(usage["upgrade_completed"]?.count == 1)
            #expect(r.dailyActiveUsers.count == 7 && r.dailyActiveUsers.last?.activeUsers == 2, "\(r.dailyActiveUsers)")
            #expect(r.conversion.signups == 2 && r.conversion.reachedPlus == 1 && r.conversion.reachedPremium == 1, "\(r.conversion)")
            #expect(r.conversion.freeToPlus == 0.5 && r.conversion.plusToPremium == 1)
            #expect(r.retention.count == 1 && r.retention.first?.users == 2 && r.retention.first?.d1 == nil)
            // The operator's tool prints the same report.
            let ctl = try TestProcess("chronirctl", ["analytics", "--days", "7", "--json"], environment: s.environment(for: "chronirctl"))
            #expect(await ctl.waitForExit() == 0, "\(ctl.output)")
            let printed = try JSONCoding.decode(AnalyticsReport.self, from: Data(ctl.output.utf8))
            #expect(printed.usage == r.usage && printed.conversion == r.conversion && printed.dailyActiveUsers == r.dailyActiveUsers, "\(ctl.output)")
            // Properties of the story, without personal data.
            let props = try await s.inDatabase("alarms") { db in
                try await db.query("SELECT properties::text FROM analytics_events WHERE name = 'alarm_snoozed'").first(String.self) ?? ""
            }
            #expect(props.contains("\"snoozeCount\": 1") && props.contains("custom"), "\(props)")
            for needle in [a.uid, b.uid, a.email, "Secret title", "secret note", "Analyst"] {
                #expect(try await Self.mentions(needle, in: s.databaseURL) == 0, "analytics holds \(needle)")
            }

            // Deleting the account forgets its pseudonym's events and row.
            #expect(try await s.request(.DELETE, "/v1/me", token: a.token).status == 204)
            #expect(await eventually(timeout: .seconds(15)) {
                let after = try? await s.rpc(.alarms, AnalyticsMethods.Report.self, .init(days: 7))
                return after?.conversion.signups == 1 && after?.usage.map(\.event).sorted() == ["onboarding_completed", "upgrade_prompt_shown"]
            }, "the deleted user's analytics stayed")
        }
    }

    @Test("the report's arithmetic: daily actives without fires, D1/D7/D30 per signup cohort (open ones left empty), conversion")
    func reportArithmetic() async throws {
        try await Self.awayFromMidnight(by: 30)   // "today" below is the report's last day
        try await withTestSuite(label: "analytics_math", start: { s in try s.startCore() }) { s in
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            let today = utc.startOfDay(for: Date())
            func day(_ offset: Int) -> Date { utc.date(byAdding: .day, value: offset, to: today)! }
            // The alarms service has made its tables (migrations run as it starts).
            #expect(await eventually(timeout: .seconds(20)) {
                (try? await s.inDatabase("alarms") { try await $0.query("SELECT count(*)::int FROM analytics_users").first(Int.self) }) != nil
            })
            do { try await s.inDatabase("alarms") { db in
                // Cohort 40 days ago: 4 users; u1 back on D1, D7 and D30, u2 on D1, u3 only fired.
                // Cohort yesterday: 2 users, u5 back today (D1); D7 and D30 still open.
                let users: [(String, Int, Bool, Bool)] = [("u1", -40, true, true), ("u2", -40, true, false), ("u3", -40, false, false),
                                                          ("u4", -40, false, false), ("u5", -1, false, false), ("u6", -1, true, false)]
                for (p, offset, plus, premium) in users {
                    try await db.query("""
                        INSERT INTO analytics_users (pseudonym, signup_day, reached_plus_at, reached_premium_at)
                        VALUES (\(p), \(day(offset))::timestamptz::date, \(plus ? day(offset) : nil), \(premium ? day(offset) : nil))
                        """).drain()
                }
                let events: [(String, String, Int)] = [("u1", "alarm_created", -40), ("u1", "alarm_completed", -39), ("u1", "alarm_completed", -33),
                                                       ("u1", "alarm_completed", -10), ("u2", "alarm_snoozed", -39), ("u3", "alarm_fired", -39),
                                                       ("u5", "alarm_created", -1), ("u5", "alarm_completed", 0), ("u6", "alarm_fired", 0)]
                for (p, name, offset) in events {
                    let at = day(offset).addingTimeInterval(3600)
                    try await db.query("""
                        INSERT INTO analytics_events (name, pseudonym, occurred_at, day) VALUES (\(name), \(p), \(at), \(day(offset))::timestamptz::date)
                        """).drain()
                }
            } } catch { Issue.record("\(String(reflecting: error))"); throw error }
            let r = try await s.rpc(.alarms, AnalyticsMethods.Report.self, .init(days: 45))
            let cohorts = Dictionary(uniqueKeysWithValues: r.retention.map { ($0.day, $0) })
            let old = try #require(cohorts[AnalyticsReports.day(day(-40))])
            #expect(old.users == 4 && old.d1 == 0.5 && old.d7 == 0.25 && old.d30 == 0.25, "\(old)")
            let new = try #require(cohorts[AnalyticsReports.day(day(-1))])
            #expect(new.users == 2 && new.d1 == 0.5 && new.d7 == nil && new.d30 == nil, "\(new)")
            let dau = Dictionary(uniqueKeysWithValues: r.dailyActiveUsers.map { ($0.day, $0.activeUsers) })
            #expect(dau[AnalyticsReports.day(day(-39))] == 2)  // u1 and u2; u3's fire is not activity
            #expect(dau[AnalyticsReports.day(day(0))] == 1)
            #expect(r.dailyActiveUsers.count == 45)
            #expect(r.conversion.signups == 6 && r.conversion.reachedPlus == 3 && r.conversion.reachedPremium == 1)
            let usage = Dictionary(uniqueKeysWithValues: r.usage.map { ($0.event, $0) })
            #expect(usage["alarm_completed"]?.count == 4 && usage["alarm_completed"]?.users == 2)
        }
    }
}
