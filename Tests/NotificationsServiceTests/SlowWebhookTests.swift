import AsyncHTTPClient
import Contracts
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
@testable import NotificationsService
import SchedulerService
import Support
@testable import SuiteSupport
import Synchronization
import Testing

/// A webhook receiver that answers slowly on purpose (issue 74): it never sends its head, or
/// sends it and then trickles its body a byte at a time, each byte inside any idle timeout.
/// Records every request (by its `X-Chronir-Delivery`) and when each answer's stream ended (the
/// client closed the connection); `open` counts the bodies being streamed now.
final class SlowReceiver: Sendable {
    let server = LocalHTTPServer()
    let deliveries = Mutex<[String]>([])
    /// Every request: its path, its delivery id and when it came.
    let requests = Mutex<[(path: String, delivery: String, at: Date)]>([])
    let ended = Mutex<[Date]>([])
    let open = Atomic<Int>(0)

    /// `/head`: no head for 120 s. `/ok`: 200 at once, then a byte every `every`. `/error`: 500
    /// at once, then a byte every `every`.
    func start(every: Duration = .milliseconds(500)) async throws {
        try await server.start { request in
            let delivery = request.headers[HTTPField.Name("x-chronir-delivery")!] ?? "-"
            self.deliveries.withLock { $0.append(delivery) }
            self.requests.withLock { $0.append((request.uri.path, delivery, Date())) }
            let status: HTTPResponse.Status
            switch request.uri.path.split(separator: "/").last.map(String.init) ?? "" {
            case "head":
                try? await Task.sleep(for: .seconds(120))
                return Response(status: .noContent)
            case "error": status = .internalServerError
            default: status = .ok
            }
            return Response(status: status, headers: [.contentLength: "100000", .contentType: "application/json"],
                            body: ResponseBody { writer in
                                self.open.add(1, ordering: .relaxed)
                                defer { self.close() }
                                for _ in 0..<100_000 {
                                    try await writer.write(ByteBuffer(string: " "))
                                    try await Task.sleep(for: every)
                                }
                                try await writer.finish(nil)
                            })
        }
    }

    private func close() {
        open.subtract(1, ordering: .relaxed)
        ended.withLock { $0.append(Date()) }
    }

    var baseURL: String { server.baseURL }
    func stop() { server.stop() }
}

@Suite("Slow webhooks: an absolute deadline per send, no 2xx body read")
struct SlowWebhookTests {
    /// Runs `send` but gives up after `limit` (the old code would hang for half an hour).
    func bounded(_ limit: Duration, _ send: @escaping @Sendable () async -> PushResult) async -> (PushResult?, Duration) {
        let started = ContinuousClock.now
        let result = await withTaskGroup(of: PushResult?.self) { group in
            group.addTask { await send() }
            group.addTask { try? await Task.sleep(for: limit); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        return (result, ContinuousClock.now - started)
    }

    @Test("a 200 whose body trickles is delivered at its head and its connection closed; a trickled 500 and a head that never comes end at the deadline, to be retried")
    func deadlinePerSend() async throws {
        let receiver = SlowReceiver()
        try await receiver.start()
        defer { receiver.stop() }
        let clients = WebhookSSRFTests.plainClients(allowPrivate: true)
        let deadline = Duration.seconds(2)
        func send(_ path: String) async -> (PushResult?, Duration) {
            await bounded(.seconds(20)) {
                let request = try! WebhookSSRFTests.signedRequest("\(receiver.baseURL)/hook/\(path)", secret: "s")
                return await clients.withClient(.direct, host: "127.0.0.1") { await WebhookProvider.execute($0, request, deadline: deadline) }
                    ?? PushResult(status: 0, outcome: .failed, reason: "no client")
            }
        }

        let (ok, okTook) = await send("ok")
        #expect(ok?.outcome == .sent, "\(String(describing: ok))")
        #expect(okTook < .seconds(1), "a 2xx waited for its body: \(okTook)")
        // The trickling answer's connection was closed by the sender, not left open.
        #expect(await eventually(timeout: .seconds(5)) { receiver.open.load(ordering: .relaxed) == 0 }, "the 200's body is still being read")

        let (failed, failedTook) = await send("error")
        #expect(failed?.outcome == .retry && failed?.status == 500, "\(String(describing: failed))")
        #expect(failedTook < deadline + .seconds(1), "a trickled error body held the send for \(failedTook)")

        let (slow, slowTook) = await send("head")
        #expect(slow?.outcome == .retry, "\(String(describing: slow))")
        #expect(slow?.reason?.contains("did not answer within") == true, "\(String(describing: slow?.reason))")
        #expect(slowTook >= deadline && slowTook < deadline + .seconds(1), "\(slowTook)")
        #expect(await eventually(timeout: .seconds(5)) { receiver.open.load(ordering: .relaxed) == 0 }, "the 500's body is still being read")
        await clients.shutdown()
    }
}

extension SlowWebhookTests {
    /// The notifications service with a small shared pool (`CHRONIR_PUSH_CONCURRENCY` 8): 40
    /// slow webhooks would fill it five times over if webhooks still shared it.
    func withSuite(_ body: (TestSuite, FakePushServer) async throws -> Void) async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        try await withTestSuite(label: "slowhook", start: { s in
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations, build: SchedulerService.build)
            try s.start("notifications", migrations: NotificationsService.migrations,
                        extra: push.environment.merging(["CHRONIR_DELIVERY_POLL": "50ms", "CHRONIR_PUSH_CONCURRENCY": "8",
                                                         "CHRONIR_WEBHOOK_ALLOW_HTTP": "1", "CHRONIR_WEBHOOK_DEADLINE": "10s"]) { $1 },
                        build: NotificationsService.build)
        }) { s in try await body(s, push) }
    }

    @Test("load: two accounts with 20 slow receivers each (heads that never come, bodies that trickle) fire together; another user's APNs push still goes within 2 s of its instant, and the slow ones hold at most the webhook lane's caps")
    func slowReceiversHoldNoSharedSlot() async throws {
        let receiver = SlowReceiver()
        try await receiver.start()
        defer { receiver.stop() }
        try await withSuite { s, push in
            // Mallory's receivers never answer; Trent's answer 200 and trickle their bodies.
            var attackers: [(TestUser, String)] = []
            for (name, path) in [("Mallory", "head"), ("Trent", "ok")] {
                let u = try await s.signup(name)
                for i in 0..<20 {
                    let r = try await s.request(.PUT, "/v1/me/devices/hook\(i)", token: u.token,
                                                json: ["platform": "web", "webhookUrl": "\(receiver.baseURL)/\(name.lowercased())/\(i)/\(path)"])
                    #expect(r.status == 200, "\(r.text)")
                }
                try await s.waitForDevices(u, count: 20)
                attackers.append((u, path))
            }
            let victim = try await s.signup("Victim")
            let phone = try await s.request(.PUT, "/v1/me/devices/phone", token: victim.token, json: ["platform": "ios", "pushToken": "victim-phone"])
            #expect(phone.status == 200, "\(phone.text)")
            try await s.waitForDevices(victim, count: 1)

            var ids: [String] = []
            for u in attackers.map(\.0) + [victim] {
                let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Now", "schedule": scheduleJSON("annual", day: 1)])
                ids.append(try #require(created.json["id"]?.stringValue, "\(created.text)"))
            }
            // The attackers' fires first (their 40 sends open), the victim's 2 s later.
            for id in ids.prefix(2) { _ = try await s.dueIn(id, seconds: 5) }
            let due = try await s.dueIn(ids[2], seconds: 7)
            #expect(await eventually(timeout: .seconds(20)) { !push.requests("apns").filter { $0.path.hasSuffix("victim-phone") }.isEmpty },
                    "the victim's push never went")
            let sent = try #require(push.requests("apns").first { $0.path.hasSuffix("victim-phone") })
            let late = sent.at.timeIntervalSince(due)
            print("slow-webhook load: victim's APNs push \(Int(late * 1000)) ms after its instant; receivers saw \(receiver.deliveries.withLock { $0.count }) requests")
            #expect(late < 2, "the victim's push went \(late) s after its instant")
            #expect(late > -0.1, "the victim's push went before its instant (\(late) s)")
            // The webhook lane's caps held: Mallory's receivers never answer, so her sends held
            // their slots until a timeout (the clients' 5 s read timeout comes first); until then
            // at most 2 of hers were open.
            let mallorys = receiver.requests.withLock { $0.filter { $0.path.hasPrefix("/mallory/") } }
            let firstMallory = try #require(mallorys.map(\.at).min())
            let early = mallorys.filter { $0.at < firstMallory.addingTimeInterval(4) }
            #expect(early.count <= 2, "\(early.count) of Mallory's sends open at once (the cap per account is 2)")
            // Trent's 200s were each delivered at their head (no body read), once.
            #expect(await eventually(timeout: .seconds(20)) {
                let n = try? await s.inDatabase("notifications") {
                    try await $0.query("SELECT count(*)::int FROM deliveries WHERE user_id = \(attackers[1].0.uid) AND state = 'sent'").first(Int.self)
                }
                return n == 20
            }, "Trent's trickling receivers were not all delivered")
            let trents = receiver.requests.withLock { $0.filter { $0.path.hasPrefix("/trent/") } }
            #expect(trents.count == 20 && Set(trents.map(\.delivery)).count == 20, "\(trents.count) requests for Trent's 20 deliveries")
        }
    }
}
