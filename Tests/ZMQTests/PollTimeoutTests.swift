import Testing
@testable import ZMQ

/// The socket thread's poll timeout until its next tick (``SocketActor/milliseconds(_:)``):
/// rounded up, so a remainder under a millisecond never becomes a 0 ms poll that spins.
@Suite("Poll timeout")
struct PollTimeoutTests {
    @Test("milliseconds until the tick", arguments: [
        (Duration.zero, 0), (.nanoseconds(-1), 0), (.milliseconds(-5), 0), (.nanoseconds(1), 1), (.microseconds(999), 1),
        (.milliseconds(1), 1), (.microseconds(1001), 2), (.milliseconds(5), 5), (.microseconds(5500), 6), (.seconds(2), 2000),
    ])
    func timeout(left: Duration, milliseconds: Int) {
        #expect(SocketActor.milliseconds(left) == milliseconds)
    }
}
