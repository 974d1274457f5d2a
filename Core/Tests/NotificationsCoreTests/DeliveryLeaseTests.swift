import NotificationsCore
import Testing

@Suite("Delivery lease: a send starts only if it ends inside its row's lease")
struct DeliveryLeaseTests {
    @Test("with a 60 s lease and sends of at most 20 s, a row may be sent until it has waited 40 s, not after", arguments: [
        (0, true), (10, true), (39, true), (40, false), (41, false), (59, false), (60, false), (600, false),
    ])
    func window(waited: Int, may: Bool) {
        #expect(DeliveryLease.maySend(age: .seconds(waited), lease: .seconds(60), sendBound: .seconds(20)) == may)
    }

    @Test("a send bound as long as the lease never starts; a clock gone backwards (negative age) does not pass")
    func edges() {
        #expect(!DeliveryLease.maySend(age: .zero, lease: .seconds(60), sendBound: .seconds(60)))
        #expect(!DeliveryLease.maySend(age: .seconds(-1), lease: .seconds(60), sendBound: .seconds(1)))
    }
}
