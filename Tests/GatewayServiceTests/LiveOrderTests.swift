import Foundation
@testable import GatewayService
import Messaging
import NIOCore
import Synchronization
import Testing

/// Issue 76: fires lost on the live stream under load, without faults. A writer passes a
/// notification only when its id is above the last it sent, so each connection must receive a
/// user's notifications in id order. The waiting room decided that order, but the hand-off to
/// the connections happened after its lock was let go: a burst released at its instant was
/// handed off user by user while the stream kept arriving, and a newer notification of a user
/// (an `alarm_changed` of the creation burst) could reach the connection before that user's
/// fire, which the writer then passed over as already sent.
///
/// These tests put a second arrival exactly between the room's decision and its hand-off (the
/// router's test hook), with no timing involved in the outcome: on the broken order the second
/// arrival finishes while the first waits; on the fixed one it cannot start until the first is
/// handed off.
@Suite("Live stream order")
struct LiveOrderTests {
    /// The router under test, reachable from its own hook.
    final class Holder: Sendable {
        let router = Mutex<LiveRouter?>(nil)
        /// Whether the hook has interleaved its arrival (once only).
        let fired = Mutex(false)
        /// Signalled when the interleaved arrival has returned: for the hook, and for the test.
        let arrived = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
    }

    static func pending(_ id: Int64, user: String, type: String, at: Int64, now: Int64) -> LiveRouter.Pending {
        let created = Date(timeIntervalSince1970: Double(at) / 1000)
        return .init(notification: .init(id: id, userId: user, type: type, createdAt: created),
                     frame: .init(id: id, bytes: ByteBuffer(string: "id: \(id)\n\n")), envelope: nil, arrived: now)
    }

    /// Every notification id a connection received, in the order received (its stream is finished first).
    static func received(_ c: LiveConnection) async -> [Int64] {
        c.close()
        var ids: [Int64] = []
        for await item in c.stream {
            if case .notifications(let frames) = item { ids += frames.map(\.id) }
        }
        return ids
    }

    /// What the SSE writer sends of those (it passes an id only above the last it sent).
    static func written(_ ids: [Int64]) -> [Int64] {
        var last = Int64.min
        return ids.filter { id in
            defer { last = max(last, id) }
            return id > last
        }
    }

    /// Builds a router whose hook, at the first hand-off that contains `trigger`, runs `interleave`
    /// on another thread and waits for it (at most 2 s: on the fixed order it cannot finish until
    /// this hand-off is done).
    static func router(now: Int64, trigger: Int64, interleave: @escaping @Sendable (LiveRouter) -> Void) -> (LiveRouter, Holder) {
        let holder = Holder()
        let router = LiveRouter(telemetry: .discarding(), now: now, beforeHandOff: { [holder] ids in
            guard ids.contains(trigger), holder.fired.withLock({ f in defer { f = true }; return !f }) else { return }
            let thread = Thread {
                if let r = holder.router.withLock({ $0 }) { interleave(r) }
                holder.arrived.signal()
                holder.done.signal()
            }
            thread.start()
            _ = holder.arrived.wait(timeout: .now() + 2)
        })
        holder.router.withLock { $0 = router }
        return (router, holder)
    }

    @Test("a fire released at its instant while a newer notification of the same user arrives: the connection receives both, fire first")
    func releaseThenArrival() async throws {
        let t0: Int64 = 1_800_000_000_000
        let due = t0 + 10_000
        let (router, holder) = Self.router(now: t0, trigger: 100) { r in
            // The creation burst: a newer `alarm_changed` of the same user, due at once.
            _ = r.arrive(Self.pending(105, user: "u", type: "alarm_changed", at: due, now: due), at: due, now: due)
        }
        let connection = try #require(router.open(user: "u"))
        // The fire is announced ahead of its instant and waits.
        #expect(router.arrive(Self.pending(100, user: "u", type: "alarm_fired", at: due, now: t0), at: due, now: t0).items.isEmpty)
        #expect(router.waiting == 1)
        // Its instant: released, and the newer one arrives between the decision and the hand-off.
        let out = router.release(now: due)
        #expect(out.items.map(\.notification.id) == [100])
        #expect(holder.fired.withLock { $0 })
        #expect(holder.done.wait(timeout: .now() + 5) == .success)
        let ids = await Self.received(connection)
        #expect(ids == [100, 105], "the connection received \(ids)")
        #expect(Self.written(ids) == [100, 105], "the writer would send \(Self.written(ids))")
    }

    @Test("a withdrawal that lets a waiting notification out while a newer one arrives: both reach the connection in id order")
    func withdrawalThenArrival() async throws {
        let t0: Int64 = 1_800_000_000_000
        let due = t0 + 10_000
        let (router, holder) = Self.router(now: t0, trigger: 101) { r in
            _ = r.arrive(Self.pending(107, user: "u", type: "alarm_changed", at: t0, now: t0), at: t0, now: t0)
        }
        let connection = try #require(router.open(user: "u"))
        // A fire waits; a change queued behind it waits too (a user's notifications go out in id order).
        _ = router.arrive(Self.pending(100, user: "u", type: "alarm_fired", at: due, now: t0), at: due, now: t0)
        _ = router.arrive(Self.pending(101, user: "u", type: "alarm_changed", at: t0, now: t0), at: t0, now: t0)
        #expect(router.waiting == 2)
        // The fire is withdrawn (its alarm was deleted before it rang): the change goes out.
        let out = router.withdraw(user: "u", ids: [100], now: t0)
        #expect(out.items.map(\.notification.id) == [101])
        #expect(holder.done.wait(timeout: .now() + 5) == .success)
        let ids = await Self.received(connection)
        #expect(ids == [101, 107], "the connection received \(ids)")
    }

    @Test("a burst of many users released at one instant, each user's newer notification arriving mid-hand-off: nothing passed over")
    func burstOfUsers() async throws {
        let t0: Int64 = 1_800_000_000_000
        let due = t0 + 10_000
        let users = (0..<50).map { "user-\($0)" }
        // Fires 1...50 (one per user), then each user's change 1001...1050 arriving during the hand-off.
        let (router, holder) = Self.router(now: t0, trigger: 1) { r in
            for (k, u) in users.enumerated() {
                let id = Int64(1001 + k)
                _ = r.arrive(Self.pending(id, user: u, type: "alarm_changed", at: due, now: due), at: due, now: due)
            }
        }
        var connections: [LiveConnection] = []
        for u in users { connections.append(try #require(router.open(user: u))) }
        for (k, u) in users.enumerated() {
            _ = router.arrive(Self.pending(Int64(1 + k), user: u, type: "alarm_fired", at: due, now: t0), at: due, now: t0)
        }
        #expect(router.release(now: due).items.count == users.count)
        #expect(holder.done.wait(timeout: .now() + 5) == .success)
        for (k, c) in connections.enumerated() {
            let ids = await Self.received(c)
            #expect(Self.written(ids) == [Int64(1 + k), Int64(1001 + k)], "\(users[k]) received \(ids)")
        }
    }
}
