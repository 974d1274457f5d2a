import Foundation
import GatewayCore
import Testing

/// The per-principal caps of shared resources, without a gateway: ``SlotCounts`` (connections
/// per address, photo bodies per account) and ``LiveStreams`` (live connections per user, and
/// which end with their session).
@Suite("Per-principal caps")
struct CapsTests {
    @Test("slots: at most the cap each; a release frees one; a release of nothing lends nothing", arguments: [1, 2, 5])
    func slots(cap: Int) {
        var s = SlotCounts(cap: cap)
        for _ in 0..<cap { let r1 = s.take("a"); #expect(r1) }
        let r2 = s.take("a"); #expect(!r2)
        let r3 = s.take("b"); #expect(r3)
        s.give("a")
        let r4 = s.take("a"); #expect(r4)
        let r5 = s.take("a"); #expect(!r5)
        s.give("c")                 // never held
        #expect(s.count("c") == 0)
        for _ in 0..<(cap + 3) { s.give("a") }
        #expect(s.count("a") == 0)
        #expect(s.principals == 1)  // only b
    }

    @Test("a cap of 0 is read as 1: a principal is never locked out altogether")
    func zeroCap() {
        var s = SlotCounts(cap: 0)
        let r6 = s.take("a"); #expect(r6)
        let r7 = s.take("a"); #expect(!r7)
    }

    @Test("live streams: the per-user cap; closing frees a place; closing twice closes nothing")
    func liveCap() {
        var l = LiveStreams<Int>(perUser: 2)
        let r8 = l.open(1, user: "u", session: "s1", expires: .distantFuture, sink: 10); #expect(r8)
        let r9 = l.open(2, user: "u", session: "s1", expires: .distantFuture, sink: 20); #expect(r9)
        let r10 = l.open(3, user: "u", session: "s2", expires: .distantFuture, sink: 30); #expect(!r10)
        let r11 = l.open(4, user: "v", session: "s3", expires: .distantFuture, sink: 40); #expect(r11)
        #expect(l.count == 3 && l.count(of: "u") == 2)
        #expect(Set(l.sinks(of: "u")) == [10, 20])
        let r12 = l.close(1, user: "u"); #expect(r12?.sink == 10)
        let r13 = l.close(1, user: "u"); #expect(r13 == nil)
        let r14 = l.close(4, user: "u"); #expect(r14 == nil)   // v's connection is not u's to close
        let r15 = l.open(3, user: "u", session: "s2", expires: .distantFuture, sink: 30); #expect(r15)
        #expect(Set(l.allSinks) == [20, 30, 40])
    }

    @Test("live streams that end: a revoked session's and an expired token's, no other")
    func ended() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var l = LiveStreams<Int>(perUser: 10)
        _ = l.open(1, user: "u", session: "revoked", expires: .distantFuture, sink: 1)
        _ = l.open(2, user: "u", session: "fine", expires: now, sink: 2)
        _ = l.open(3, user: "v", session: "fine", expires: now.addingTimeInterval(1), sink: 3)
        let ended = l.ended(isRevoked: { $0 == "revoked" }, now: now).map(\.id).sorted()
        #expect(ended == [1, 2])
        #expect(l.count == 3)   // deciding closes nothing
    }
}
