@testable import GatewayService
import Messaging
import Testing

/// ``LiveClock``'s readings of the database's clock: the bound it keeps never puts the live
/// stream's time ahead of the database's.
@Suite("Live clock readings")
struct LiveClockReadingTests {
    @Test("the fastest round trip is kept, as the database's time less the whole round trip")
    func fastestLowerBound() {
        let slow = LiveClock.Reading(sent: 0, database: 1_000, answered: 40)
        let fast = LiveClock.Reading(sent: 100, database: 1_101, answered: 103)
        let backwards = LiveClock.Reading(sent: 200, database: 9_999, answered: 199)
        #expect(LiveClock.Reading.best([slow, fast, backwards]) == fast)
        #expect(fast.lowerBound == 998)
        #expect(LiveClock.Reading.best([]) == nil)
        #expect(LiveClock.Reading.best([backwards]) == nil)
    }

    @Test("never ahead of the database: whenever in its round trip the database read its clock, the live time is at or behind it")
    func neverAhead() {
        // The database's clock is the monotonic one plus 5 000 ms; it was read at `read`.
        for read in Int64(100)...Int64(110) {
            let r = LiveClock.Reading(sent: 100, database: read + 5_000, answered: 110)
            // The live time at monotonic m is m + lowerBound; the database's is m + 5 000.
            #expect(r.lowerBound <= 5_000)
            #expect(5_000 - r.lowerBound <= 10, "behind by more than the round trip")
        }
    }

    @Test("a host clock ahead is corrected by the first reading")
    func recordCorrects() {
        let clock = LiveClock(ahead: .seconds(4))
        #expect(clock.wallOffsetMilliseconds > -50 && clock.wallOffsetMilliseconds < 50)
        let m = monotonicMilliseconds()
        // The database's time is this host's wall clock less the failpoint's 4 s.
        let database = clock.now() - 4_000
        clock.record([.init(sent: m, database: database, answered: m)])
        #expect(clock.isMeasured)
        #expect(abs(clock.wallOffsetMilliseconds + 4_000) < 50, "\(clock.wallOffsetMilliseconds)")
    }
}
