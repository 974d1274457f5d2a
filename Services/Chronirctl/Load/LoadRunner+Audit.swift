import Contracts
import Foundation
import Messaging
import Schedules

extension LoadRunner {
    /// Reads back, as each user, the alarms the suite accepted for the window (with their members
    /// as the suite holds them after the run; the load changes no membership once its groups
    /// are formed) and the user's inbox, and judges the run by them (``LoadAudit``): what the
    /// suite accepted, not what the generator happened to see answered. A read that keeps
    /// failing (a gateway killed by the run) makes the audit incomplete, which is a problem of
    /// the run, not a crash of the generator. A row read whose frame is still on its way is
    /// waited for, up to `min(--drain, 30)` seconds.
    /// `groupMembers`: each of the run's groups (by id) with the members the generator formed it with.
    func audit(_ users: [User], windowStart: Date, groupMembers: [String: Set<String>] = [:]) async throws -> LoadAudit.Result {
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
                let r = await Self.read(http, "GET /v1/alarms (audit)", path, token: u.token)
                guard r.status == 200, let page = try? decoder.decode(AlarmPage.self, from: r.body) else {
                    return .failure(LoadFailure("reading \(u.uid)'s alarms: \(r.status.map(String.init) ?? "no answer")"))
                }
                for a in page.alarms {
                    // Due inside the window and accepted before its instant (else it fires tomorrow).
                    guard let due = dueAt[a.schedule.timeOfDay], a.createdAt < due else { continue }
                    facts.append(.init(id: a.id, members: [a.ownerId] + a.sharedWith, due: due, completed: a.lastCompletedDate != nil,
                                       completer: planned[a.id]?.completer, groupMembers: a.groupId.flatMap { groupMembers[$0] }))
                }
                cursor = page.nextCursor
            } while cursor != nil
            var rows: [LoadAudit.Row] = []
            var since: Int64 = 0
            while true {
                let r = await Self.read(http, "GET /v1/me/notifications (audit)", "/v1/me/notifications?since=\(since)&limit=500", token: u.token)
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
        var unreadable: [String] = []
        for (i, result) in results.enumerated() {
            switch result {
            case .success(let (facts, rows)):
                alarms += facts
                inbox[users[i].uid] = rows
            case .failure(let e):
                unreadable.append(e.description)
            }
        }
        let deadline = Date().addingTimeInterval(Double(min(options.drain, 30)))
        while true {
            var result = LoadAudit.compute(alarms: alarms, inbox: inbox, received: tracker.frames, planned: Set(planned.keys))
            result.unreadable = unreadable.count
            result.examples = Array((unreadable.prefix(3) + result.examples).prefix(12))
            if result.fire.lostOnStream + result.completion.lostOnStream + result.otherRowsNotOnStream == 0 || Date() >= deadline { return result }
            try await Task.sleep(for: .seconds(1))
        }
    }

    /// An idempotent read, sent again after a transport error, a 5xx or a 429 (up to 5 tries, a
    /// second apart; the first answer otherwise).
    /// The audit's own reads of the suite's record, after the run. A 503 or 504 (a replica that
    /// an episode ending just then left without an answer: a read sent to a killed notifications
    /// replica waits out the gateway's 10 s) is sent again as the set-up's requests are and
    /// counted as refused, not as a failure of the run; any other 5xx is tried again too, and counts.
    static func read(_ http: LoadHTTP, _ operation: String, _ path: String, token: String) async -> LoadResponse {
        var r = await http.send(operation, .GET, path, token: token, retryTransport: true, retryRefused: true)
        for _ in 1..<5 {
            guard r.status == nil || r.status! >= 500 || r.status == 429 else { break }
            try? await Task.sleep(for: .seconds(1))
            r = await http.send(operation, .GET, path, token: token, retryTransport: true, retryRefused: true)
        }
        return r
    }
}
