@testable import AlarmsService
import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import Support
@testable import SuiteSupport
import Testing

/// The gateway names each completion request's log (`completionId`) and sends the request again
/// when an attempt gets no answer (the replica that took it died): the retry, on whichever replica
/// takes it, must answer the log the first attempt wrote, never mark the next occurrence.
@Suite("Completions retried after a lost answer")
struct CompletionRetryTests {
    let batches = CompletionBatchTests()

    func mark(_ id: String, by actor: String, completionId: String?) -> MarkRequest {
        MarkRequest(request: CompletionCreate(alarmId: id, status: "completed", completionId: completionId), actor: actor,
                    receivedAt: Date(), context: .topLevel)
    }

    @Test("a request retried with its completionId gets the first log and the alarm moves on once; another's id is refused")
    func retried() async throws {
        try await withTestSuite(label: "retry", start: { try $0.startCore() }) { s in
            let (owner, list) = try await batches.alarms(s, 2)
            let stranger = try await s.signup("Stranger")
            let (a, b) = (list[0], list[1])
            let id = UUIDv7.string()
            try await batches.withBatch(s) { batch, db in
                // The first attempt: committed, its answer lost with the replica.
                let first = try await batch.record([mark(a.id, by: owner.uid, completionId: id)])[0].get()
                #expect(first.created && first.completion.id == id && first.completion.scheduledDate == a.due)
                // The retry (no occurrence given, as the first): the same log, the alarm as it is.
                let retry = try await batch.record([mark(a.id, by: owner.uid, completionId: id)])[0].get()
                #expect(retry.created && retry.completion.id == id && retry.completion.scheduledDate == a.due)
                #expect(retry.alarm.nextFireDate == a.due.addingTimeInterval(CompletionBatchTests.week))
                #expect(retry.alarm.version == first.alarm.version, "the retry must not move the alarm again")
                // A retry in the same batch as a fresh mark of the same alarm: each as alone.
                let both = await batch.record([mark(a.id, by: owner.uid, completionId: id), mark(a.id, by: owner.uid, completionId: nil)])
                #expect(try both[0].get().completion.id == id)
                #expect(try both[1].get().completion.scheduledDate == a.due.addingTimeInterval(CompletionBatchTests.week))
                // Someone else's id (or the same id on another alarm) is refused, and reveals nothing.
                let theirs = await batch.record([mark(b.id, by: owner.uid, completionId: id), mark(a.id, by: stranger.uid, completionId: id)])
                #expect(batches.code(theirs[0]) == .alreadyExists)
                #expect(batches.code(theirs[1]) == .alreadyExists || batches.code(theirs[1]) == .alarmNotFound)
                let logs = try await db.query("SELECT count(*)::int FROM completions WHERE alarm_id = \(a.id)").first(Int.self)
                #expect(logs == 2, "one log for the first request and its retries, one for the fresh mark")
                let events = try await db.query("SELECT count(*)::int FROM outbox WHERE type = 'alarms.alarm-completed'").first(Int.self)
                #expect(events == 2)
            }
            // Through the gateway each request gets a log id of its own: two requests are two marks.
            let one = try await s.request(.POST, "/v1/alarms/\(b.id)/completions", token: owner.token, json: ["status": "completed"])
            let two = try await s.request(.POST, "/v1/alarms/\(b.id)/completions", token: owner.token,
                                          json: ["status": "completed", "completionId": id])
            #expect(one.status == 201 && two.status == 201, "\(one.text) \(two.text)")
            let ids = [one, two].compactMap { $0.json["completion"]?["id"]?.stringValue }
            #expect(ids.count == 2 && ids[0] != ids[1] && !ids.contains(id), "a client cannot choose the log id: \(ids)")
        }
    }
}
