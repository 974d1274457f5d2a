/// Per-user queues of items that wait for their instant, released in id order: an item goes out
/// when its instant has come *and* every item of the same user with a smaller id has gone out
/// (or was withdrawn). So each user's sequence is in id order, and a cursor (the last id a
/// client saw) never passes an item it has not seen. Items whose instant has passed and that
/// nothing waits in front of go out at once.
///
/// The gateway's live stream keeps one: fires are announced ahead of their instant and wait
/// here until it. Pure: time only moves through the `now` the caller passes (milliseconds).
public struct WaitingRoom<Item: Sendable>: Sendable {
    struct Waiting: Sendable {
        var id: Int64
        var at: Int64
        var item: Item
    }

    /// Users with something waiting: their items in id order; the head waits for its instant.
    private var queues: [String: [Waiting]] = [:]
    /// Heads scheduled in the wheel (by id) and whose queue they lead.
    private var scheduled: [Int64: String] = [:]
    private var wheel: TimingWheel

    public init(now: Int64, tick: Int64 = 5) {
        wheel = TimingWheel(now: now, tick: tick)
    }

    /// Items waiting.
    public private(set) var count = 0

    /// The earliest instant something may be released (for a driver that sleeps until then).
    public var nextInstant: Int64? { wheel.nextExpiration }

    /// Whether the item `id` of `user` is waiting.
    public func isWaiting(_ id: Int64, user: String) -> Bool {
        queues[user]?.contains { $0.id == id } ?? false
    }

    /// An item arrives (ids of a user normally arrive in increasing order; a smaller one goes
    /// in front). Returns what goes out now, in order. A repeat of a waiting id is ignored.
    public mutating func arrive(id: Int64, user: String, at: Int64, item: Item, now: Int64) -> [Item] {
        guard var queue = queues[user] else {
            if at <= now { return [item] }
            queues[user] = [Waiting(id: id, at: at, item: item)]
            count += 1
            schedule(id, at: at, user: user)
            return []
        }
        guard !queue.contains(where: { $0.id == id }) else { return [] }
        let position = queue.lastIndex { $0.id < id }.map { $0 + 1 } ?? 0
        queue.insert(Waiting(id: id, at: at, item: item), at: position)
        queues[user] = queue
        count += 1
        return releaseDue(user: user, now: now)
    }

    /// Everything whose instant has come by `now` and that nothing waits in front of.
    public mutating func release(now: Int64) -> [Item] {
        var out: [Item] = []
        for entry in wheel.advance(to: now) {
            guard let user = scheduled.removeValue(forKey: Int64(bitPattern: entry.key)) else { continue }
            out += releaseDue(user: user, now: now)
        }
        return out
    }

    /// Withdraws waiting items of `user` (those already out are not affected); returns what the
    /// withdrawal lets out now.
    public mutating func withdraw(user: String, ids: Set<Int64>, now: Int64) -> [Item] {
        guard var queue = queues[user] else { return [] }
        let before = queue.count
        for w in queue where ids.contains(w.id) { unschedule(w.id) }
        queue.removeAll { ids.contains($0.id) }
        count -= before - queue.count
        queues[user] = queue
        return releaseDue(user: user, now: now)
    }

    /// Pops the user's due items from the front; the new head, if any, is scheduled.
    private mutating func releaseDue(user: String, now: Int64) -> [Item] {
        guard var queue = queues[user] else { return [] }
        var n = 0
        while n < queue.count, queue[n].at <= now {
            unschedule(queue[n].id)
            n += 1
        }
        let out = queue[..<n].map(\.item)
        queue.removeFirst(n)
        count -= n
        if let head = queue.first {
            queues[user] = queue
            if scheduled[head.id] == nil { schedule(head.id, at: head.at, user: user) }
        } else {
            queues[user] = nil
        }
        return out
    }

    private mutating func schedule(_ id: Int64, at: Int64, user: String) {
        scheduled[id] = user
        wheel.schedule(key: UInt64(bitPattern: id), at: at)
    }

    private mutating func unschedule(_ id: Int64) {
        if scheduled.removeValue(forKey: id) != nil { _ = wheel.cancel(key: UInt64(bitPattern: id)) }
    }
}
