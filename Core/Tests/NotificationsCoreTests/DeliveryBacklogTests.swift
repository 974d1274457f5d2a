import NotificationsCore
import Testing

/// ``DeliveryBacklog``: what the delivery worker sends, parks and puts back at each step,
/// without a worker, a table or a receiver.
@Suite("Delivery backlog: parking webhooks for a busy receiver")
struct DeliveryBacklogTests {
    /// A row: its id, and where it goes (nil: APNs or FCM; else a webhook of account to host).
    struct Row: Sendable, Equatable, CustomStringConvertible {
        var id: Int
        var account: String?
        var host = "hooks.example"
        var description: String { "\(id)" }
    }

    static func backlog(providers: Int = 4, webhooks: Int = 8, perAccount: Int = 1, perHost: Int = 8, maxParked: Int = 16)
        -> DeliveryBacklog<Row> {
        DeliveryBacklog(lanes: SendLanes(limits: .init(providers: providers, webhooks: webhooks, webhooksPerAccount: perAccount,
                                                         webhooksPerDestination: perHost)),
                        maxParked: maxParked) { row in
            row.account.map { .webhook(account: $0, destination: $0 == "" ? "" : row.host) } ?? .provider
        }
    }

    static func hook(_ id: Int, _ account: String) -> Row { Row(id: id, account: account) }

    @Test("a webhook of a busy account waits in the worker, and goes out first once its slot frees — not back to the table")
    func parks() {
        var b = Self.backlog()
        b.enqueue([Self.hook(1, "a"), Self.hook(2, "a"), Self.hook(3, "b"), Self.hook(4, "a")])
        let first = b.release(stopping: false) { _ in true }
        #expect(first.send.map(\.id) == [1, 3])
        #expect(first.putBack.isEmpty && b.deferred.isEmpty)
        #expect(b.parked.map(\.id) == [2, 4])
        // Nothing frees: nothing goes, nothing goes back.
        let idle = b.release(stopping: false) { _ in true }
        #expect(idle.send.isEmpty && idle.putBack.isEmpty && b.parked.map(\.id) == [2, 4])
        // a's send ends: its next webhook goes at once, in order.
        b.finished(Self.hook(1, "a"))
        let next = b.release(stopping: false) { _ in true }
        #expect(next.send.map(\.id) == [2])
        #expect(b.parked.map(\.id) == [4])
    }

    @Test("parked webhooks go before newer claims of the same account")
    func parkedFirst() {
        var b = Self.backlog()
        b.enqueue([Self.hook(1, "a"), Self.hook(2, "a")])
        _ = b.release(stopping: false) { _ in true }
        b.finished(Self.hook(1, "a"))
        b.enqueue([Self.hook(3, "a")])
        let out = b.release(stopping: false) { _ in true }
        #expect(out.send.map(\.id) == [2])
        #expect(b.parked.map(\.id) == [3])
    }

    @Test("beyond maxParked a busy receiver's rows go back to the table, with the lane's reason")
    func overflow() {
        var b = Self.backlog(maxParked: 2)
        b.enqueue((1...5).map { Self.hook($0, "a") })
        let out = b.release(stopping: false) { _ in true }
        #expect(out.send.map(\.id) == [1])
        #expect(b.parked.map(\.id) == [2, 3])
        #expect(b.deferred.map(\.id) == [4, 5] && out.putBack == ["account", "account"])
        #expect(b.takeDeferred().map(\.id) == [4, 5])
        #expect(b.deferred.isEmpty)
    }

    @Test("stopping puts every parked row back; a row past its lease goes back, parked or queued")
    func putBack() {
        var b = Self.backlog()
        b.enqueue([Self.hook(1, "a"), Self.hook(2, "a"), Self.hook(3, "a")])
        _ = b.release(stopping: false) { _ in true }
        let lapsed = b.release(stopping: false) { $0.id != 2 }
        #expect(lapsed.putBack == ["lease"] && b.deferred.map(\.id) == [2])
        let stop = b.release(stopping: true) { _ in true }
        #expect(stop.send.isEmpty && stop.putBack == ["stopping"])
        #expect(b.deferred.map(\.id) == [2, 3] && b.parked.isEmpty)
        var q = Self.backlog()
        q.enqueue([Row(id: 7, account: nil), Row(id: 8, account: nil)])
        let old = q.release(stopping: false) { $0.id != 7 }
        #expect(old.send.map(\.id) == [8] && old.putBack == ["lease"] && q.deferred.map(\.id) == [7])
    }

    @Test("a full provider lane stops the dispatch in order: the rest waits in the queue, not parked")
    func providersFull() {
        var b = Self.backlog(providers: 2)
        b.enqueue((1...4).map { Row(id: $0, account: nil) })
        let out = b.release(stopping: false) { _ in true }
        #expect(out.send.map(\.id) == [1, 2])
        #expect(b.waiting == 2 && b.parked.isEmpty && b.deferred.isEmpty)
        b.finished(Row(id: 1, account: nil))
        #expect(b.release(stopping: false) { _ in true }.send.map(\.id) == [3])
    }
}
