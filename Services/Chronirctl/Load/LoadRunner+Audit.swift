import Contracts
import Foundation
import Messaging
import Schedules

extension LoadRunner {
    /// Reads back, as each user, the alarms the suite accepted for the window (with their members
    /// as they fired) and the user's inbox, and judges the run by them (``LoadAudit``): what the
    /// suite accepted, not what the generator happened to see answered.
    func audit(_ users: [User], windowStart: Date) async throws -> LoadAudit.Result {
        let window = (0..<options.window).map { windowStart.addingTimeInterval(Double($0) * 60) }
        let hm = { (d: Date) in String(ISOTime.format(d).dropFirst(11).prefix(5)) }
        let dueAt = Dictionary(window.map { (hm($0), $0) }, uniquingKeysWith: { a, _ in a })
        let planned = tracker.planned
        let results = await concurrently(users.count) { [http] i -> Result<([LoadAudit.AlarmFacts], [LoadAudit.Row]), LoadFailure> in
            let u = users[i]
            let decoder = JSONCoding.decoder()
            var facts: [LoadAudit.AlarmFacts] = []
            var cursor: String?
            repeat {
                var path = "/v1/alarms?scope=mine&limit=200"
                if let c = cursor { path += "&cursor=" + (c.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? c) }
                let r = await http.send("GET /v1/alarms (audit)", .GET, path, token: u.token)
                guard r.status == 200, let page = try? decoder.decode(AlarmPage.self, from: r.body) else {
                    return .failure(LoadFailure("reading \(u.uid)'s alarms: \(r.status.map(String.init) ?? "no answer")"))
                }
                for a in page.alarms {
                    // Due inside the window and accepted before its instant (else it fires tomorrow).
                    guard let due = dueAt[a.schedule.timeOfDay], a.createdAt < due else { continue }
                    facts.append(.init(id: a.id, members: [a.ownerId] + a.sharedWith, due: due, completed: a.lastCompletedDate != nil,
                                       completer: planned[a.id]?.completer))
                }
                cursor = page.nextCursor
            } while cursor != nil
            var rows: [LoadAudit.Row] = []
            var since: Int64 = 0
            while true {
                let r = await http.send("GET /v1/me/notifications (audit)", .GET, "/v1/me/notifications?since=\(since)&limit=500", token: u.token)
                guard r.status == 200, let page = try? decoder.decode(NotificationsMethods.Inbox.Response.self, from: r.body) else {
                    return .failure(LoadFailure("reading \(u.uid)'s inbox: \(r.status.map(String.init) ?? "no answer")"))
                }
                rows += page.notifications.map {
                    .init(id: $0.id, user: $0.userId, type: $0.type, alarm: $0.data["alarmId"],
                          occurrence: $0.data["occurrenceAt"].flatMap(ISOTime.parse), completedBy: $0.data["completedBy"])
                }
                guard page.hasMore, let last = page.notifications.last?.id else { break }
                since = last
            }
            return .success((facts, rows))
        }
        var alarms: [LoadAudit.AlarmFacts] = []
        var inbox: [String: [LoadAudit.Row]] = [:]
        for (i, result) in results.enumerated() {
            let (facts, rows) = try result.get()
            alarms += facts
            inbox[users[i].uid] = rows
        }
        return LoadAudit.compute(alarms: alarms, inbox: inbox, received: tracker.frames, planned: Set(planned.keys))
    }
}
