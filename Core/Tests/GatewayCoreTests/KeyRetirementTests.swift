import Foundation
import GatewayCore
import Testing

/// Retired token-signing keys are dropped after the longest token lifetime.
@Suite("Retired signing keys")
struct KeyRetirementTests {
    @Test("a key accounts stops publishing is kept for the grace after it was last published, then dropped once; published keys never are")
    func retiredAfterGrace() {
        var r = KeyRetirement(grace: 3660)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(r.published(["k-old"], at: t0).isEmpty)
        // Rotated: only the new key is published from now on.
        #expect(r.published(["k-new"], at: t0.addingTimeInterval(60)).isEmpty)
        #expect(r.published(["k-new"], at: t0.addingTimeInterval(3600)).isEmpty, "dropped while tokens it signed may still be valid")
        #expect(r.published(["k-new"], at: t0.addingTimeInterval(3661)) == ["k-old"])
        #expect(r.published(["k-new"], at: t0.addingTimeInterval(9000)).isEmpty, "dropped twice")
        #expect(r.lastPublished.keys.sorted() == ["k-new"])
        // Published again later (a rollback): trusted again, no drop.
        #expect(r.published(["k-new", "k-old"], at: t0.addingTimeInterval(9001)).isEmpty)
        #expect(r.published([], at: t0.addingTimeInterval(9001 + 3000)).isEmpty)
        #expect(r.published([], at: t0.addingTimeInterval(9001 + 3661)) == ["k-new", "k-old"])
    }
}
