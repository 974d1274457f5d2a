import CoreTesting
import Testing
@testable import TimingWheel

@Suite("Timing wheel")
struct TimingWheelTests {
    @Test("timers come out at their deadline, in deadline order, and not before")
    func ordering() {
        var w = TimingWheel(now: 1_000, tick: 10, slotsPerLevel: 8, levels: 4)
        w.schedule(key: 3, at: 1_250)
        w.schedule(key: 1, at: 1_015)
        w.schedule(key: 2, at: 1_015)
        w.schedule(key: 4, at: 1_016)
        let r1 = w.advance(to: 1_014)

        #expect(r1.isEmpty)
        let r2 = w.advance(to: 1_015)
        #expect(r2.map(\.key) == [1, 2])
        let r3 = w.advance(to: 1_015)
        #expect(r3.isEmpty)
        let r4 = w.advance(to: 1_249)
        #expect(r4.map(\.key) == [4])
        let last = w.advance(to: 1_250)
        #expect(last.map(\.key) == [3])
        #expect(w.count == 0)
    }

    @Test("cancel and reschedule by key are O(1) and exact")
    func cancelReschedule() {
        var w = TimingWheel(now: 0, tick: 10)
        for k in 0..<100 { w.schedule(key: UInt64(k), at: Int64(100 + k * 10)) }
        let c50 = w.cancel(key: 50)
        #expect(c50)
        let again = w.cancel(key: 50)
        let unknown = w.cancel(key: 1000)
        #expect(!again && !unknown)
        w.schedule(key: 10, at: 5_000)     // later
        w.schedule(key: 90, at: 50)        // earlier
        #expect(w.deadline(of: 10) == 5_000)
        let due = w.advance(to: 1_100).map(\.key)
        #expect(due.first == 90)
        #expect(!due.contains(50) && !due.contains(10))
        #expect(due.count == 98)  // 100 less the cancelled one and the one moved to 5 000
        let r5 = w.advance(to: 5_000)

        #expect(r5.map(\.key) == [10])
        #expect(w.count == 0)
    }

    @Test("timers cascade across levels and far timers wait in the top level")
    func cascade() {
        var w = TimingWheel(now: 0, tick: 10, slotsPerLevel: 4, levels: 3)  // spans: 40 ms, 160 ms, 640 ms
        let deadlines: [Int64] = [35, 45, 159, 161, 639, 641, 5_000, 100_000, 1_000_000]
        for (k, d) in deadlines.enumerated() { w.schedule(key: UInt64(k), at: d) }
        var got: [TimingWheel.Entry] = []
        var t: Int64 = 0
        while t <= 1_000_000 + 997 {
            for e in w.advance(to: t) {
                #expect(e.deadline <= t)
                #expect(t - e.deadline < 997, "late: \(e) at \(t)")
                got.append(e)
            }
            t += 997
        }
        #expect(got.map(\.deadline) == deadlines)
        // Stepping exactly through every millisecond: each comes out at its deadline.
        var exact = TimingWheel(now: 0, tick: 10, slotsPerLevel: 4, levels: 3)
        for (k, d) in deadlines.prefix(7).enumerated() { exact.schedule(key: UInt64(k), at: d) }
        for ms in Int64(1)...5_000 {
            for e in exact.advance(to: ms) { #expect(e.deadline == ms) }
        }
        #expect(exact.count == 0)
    }

    @Test("many timers in one slot, and overdue timers, come out in order")
    func sameSlot() {
        var w = TimingWheel(now: 10_000, tick: 10)
        for k in 0..<10_000 { w.schedule(key: UInt64(k), at: 20_000 + Int64(k % 7)) }
        w.schedule(key: 99_999, at: 5)  // already overdue
        let r6 = w.advance(to: 10_000)

        #expect(r6.map(\.key) == [99_999])
        let due = w.advance(to: 30_000)
        #expect(due.count == 10_000)
        #expect(due == due.sorted())
    }

    @Test("a long random workload agrees with a sorted reference")
    func randomAgainstReference() {
        var rng = SeededRandom.forTest("TimingWheelTests.randomAgainstReference")
        let seed = rng.seed
        var w = TimingWheel(now: 0, tick: 10, slotsPerLevel: 16, levels: 4)
        var reference: [UInt64: Int64] = [:]
        var t: Int64 = 0
        for step in 0..<20_000 {
            let key = UInt64.random(in: 0..<2_000, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6:
                let d = t + Int64.random(in: -50...200_000, using: &rng)
                w.schedule(key: key, at: d)
                reference[key] = d
            case 6..<8:
                let cancelled = w.cancel(key: key)
                #expect(cancelled == (reference.removeValue(forKey: key) != nil), "seed \(seed), step \(step)")
            default:
                t += Int64.random(in: 0...3_000, using: &rng)
                let due = w.advance(to: t)
                let expected = reference.filter { $0.value <= t }.map { TimingWheel.Entry(key: $0.key, deadline: $0.value) }.sorted()
                #expect(due == expected, "seed \(seed), step \(step)")
                for e in due { reference[e.key] = nil }
            }
            #expect(w.count == reference.count, "seed \(seed), step \(step)")
        }
        let r7 = w.advance(to: Int64.max / 4)

        #expect(r7.count == reference.count, "seed \(seed)")
    }

    @Test("memory per pending timer stays under 64 bytes at scale")
    func memory() {
        var w = TimingWheel(now: 0, tick: 10)
        w.reserveCapacity(200_000)
        for k in 0..<200_000 { w.schedule(key: UInt64(k) &* 2_654_435_761, at: Int64(k % 3_600_000)) }
        #expect(w.bytesPerTimer <= 64, "\(w.bytesPerTimer) bytes per timer")
        #expect(w.nextExpiration != nil)
    }
}
