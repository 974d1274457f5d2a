import Foundation
@testable import Messaging
import Synchronization
import Testing
import ZMQ

/// RPC deadlines across hosts whose clocks disagree (issue 58): a request's `deadline` is by its
/// caller's clock; the server reads it on its own with the caller's offset learnt from the
/// requests' `occurredAt` (``PeerClockOffsets``). Requests are written by hand here, as a caller
/// on another host would send them.
final class Answers: Sendable {
    let texts = Mutex<[String]>([])
}

@Suite("Deadlines across skewed clocks")
struct ClockOffsetDeadlineTests {
    func request(source: String, clockBehind: TimeInterval, timeout: TimeInterval, text: String) -> Data {
        let callerNow = Date().addingTimeInterval(-clockBehind)
        let deadline = Int64((callerNow.timeIntervalSince1970 + timeout) * 1000)
        let payload = try! JSONCoding.encode(Echo.Request(text: text))
        return Envelope(type: Echo.type, occurredAt: callerNow, source: source,
                        headers: [EnvelopeHeader.deadline: String(deadline)], payload: payload).encoded(as: .json)
    }

    @Test("a caller 10 s behind with a 2 s deadline is answered; agreeing clocks are unchanged")
    func deadlinesReadWithTheOffset() async throws {
        let context = ZMQContext(heartbeat: nil)
        var router = RPCRouter()
        router.on(Echo.self) { request, _ in Echo.Response(text: request.text, actor: nil) }
        let server = try RPCServer(context: context, serviceName: "test", instance: "1", binds: ["tcp://127.0.0.1:*"],
                                   router: router, telemetry: .discarding())
        let running = Task { try await server.run() }
        var options = SocketOptions(type: .dealer)
        options.connects = server.endpoints
        let dealer = try SocketActor(context: context, options: options, name: "skewed-caller")
        let answers = Answers()
        let reader = Task {
            for await m in dealer.messages {
                guard let e = try? Envelope.decode(m.frames.last!), let r = try? JSONCoding.decode(Echo.Response.self, from: e.payload) else { continue }
                answers.texts.withLock { $0.append(r.text) }
            }
        }
        func answered(_ text: String) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(3)
            while ContinuousClock.now < deadline {
                if answers.texts.withLock({ $0.contains(text) }) { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return false
        }
        // Behind by 10 s: by the server's clock the deadline passed 8 s ago; read with the offset it is 2 s away.
        dealer.send([request(source: "gateway/behind", clockBehind: 10, timeout: 2, text: "behind")])
        #expect(await answered("behind"), "a caller whose clock is behind was refused as expired")
        // Agreeing clocks: an answer as before.
        dealer.send([request(source: "gateway/agrees", clockBehind: 0, timeout: 2, text: "agrees")])
        #expect(await answered("agrees"))
        await dealer.close()
        reader.cancel()
        running.cancel()
        await server.close()
        context.terminate()
    }

    @Test("offsets: the smallest delta of the last window or two, 0 below the threshold")
    func offsets() {
        let o = PeerClockOffsets(threshold: 1_000, window: 60_000)
        let t0: Int64 = 1_800_000_000_000
        func sent(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
        // A caller 5 s behind: deltas 5 000 + transit (3 ms, 40 ms, 900 ms of queueing).
        #expect(o.observe(source: "a", sentAt: sent(t0 - 5_003), receivedAt: t0) == 5_003)
        #expect(o.observe(source: "a", sentAt: sent(t0 + 1_000 - 5_900), receivedAt: t0 + 1_000) == 5_003)
        #expect(o.observe(source: "a", sentAt: sent(t0 + 2_000 - 5_040), receivedAt: t0 + 2_000) == 5_003)
        // Agreeing clocks with 900 ms of queueing: under the threshold, nothing moves.
        #expect(o.observe(source: "b", sentAt: sent(t0 - 900), receivedAt: t0) == 0)
        // A caller ahead: negative.
        #expect(o.observe(source: "c", sentAt: sent(t0 + 7_000), receivedAt: t0) == -7_000)
        // Its clock fixed: after two windows the old offset is gone.
        _ = o.observe(source: "c", sentAt: sent(t0 + 61_000), receivedAt: t0 + 61_000)
        #expect(o.observe(source: "c", sentAt: sent(t0 + 122_000), receivedAt: t0 + 122_000) == 0)
    }
}
