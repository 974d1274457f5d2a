/// What the delivery worker holds between its steps, as one value: claimed rows not yet sent,
/// webhooks parked in the worker for their account's or host's slot, the send lanes
/// (``SendLanes``), and the rows to put back in the table. Pure: the worker claims, sends and
/// records; this decides, at each step, what goes out now, what waits here and what goes back.
///
/// **Parking.** A webhook whose account, host or lane is busy waits here, up to `maxParked`,
/// and goes out first as soon as a slot frees: sends to one busy receiver follow each other at
/// once, instead of each going back to the table for `deferFor` and being claimed again.
/// Beyond `maxParked`, it goes back.
public struct DeliveryBacklog<Item: Sendable>: Sendable {
    /// Claimed rows in claim order; those before `next` are sent, parked or put back.
    private var queue: [Item] = []
    private var next = 0
    /// The slots of the sends in flight.
    public private(set) var lanes: SendLanes
    /// Rows to put back in the table, taken by the next recording (``takeDeferred()``).
    public private(set) var deferred: [Item] = []
    /// Webhooks waiting here for a slot, in the order they came.
    public private(set) var parked: [Item] = []
    /// The most webhooks parked at once.
    public let maxParked: Int
    private let laneOf: @Sendable (Item) -> SendLanes.Lane

    /// `lane`: where an item is sent (its lane, account and host).
    public init(lanes: SendLanes, maxParked: Int, lane: @escaping @Sendable (Item) -> SendLanes.Lane) {
        self.lanes = lanes
        self.maxParked = maxParked
        self.laneOf = lane
    }

    /// Claimed rows not yet sent, parked or put back.
    public var waiting: Int { queue.count - next }

    /// Rows a claim returned, after those still waiting.
    public mutating func enqueue(_ items: [Item]) {
        queue.append(contentsOf: items)
    }

    /// A send of `item` finished: its slot is free.
    public mutating func finished(_ item: Item) {
        lanes.release(laneOf(item))
    }

    /// The rows to put back, handed to the recording that puts them back.
    public mutating func takeDeferred() -> [Item] {
        defer { deferred.removeAll(keepingCapacity: true) }
        return deferred
    }

    /// The rows to send now, each admitted by its lane: the parked webhooks first, in order,
    /// then the queue until the provider lane is full. A row that has waited too long to send
    /// within its lease (`maySend` false), or any parked one while `stopping`, goes back to
    /// the table (``deferred``); so does a busy receiver's row beyond ``maxParked``. Returns the
    /// reason of each row put back (a metric's label: `lease`, `stopping`, or the lane's
    /// ``SendLanes/Reason``).
    public mutating func release(stopping: Bool, maySend: (Item) -> Bool) -> (send: [Item], putBack: [String]) {
        var send: [Item] = [], putBack: [String] = []
        if !parked.isEmpty {
            var still: [Item] = []
            for item in parked {
                if stopping || !maySend(item) {
                    deferred.append(item)
                    putBack.append(stopping ? "stopping" : "lease")
                } else if lanes.admit(laneOf(item)) == .send {
                    send.append(item)
                } else {
                    still.append(item)
                }
            }
            parked = still
        }
        dispatch: while next < queue.count {
            let item = queue[next]
            // Waited too long in the queue: a send now could outlive the row's lease, and
            // another worker could claim and send it meanwhile. Put it back.
            guard maySend(item) else {
                next += 1
                deferred.append(item)
                putBack.append("lease")
                continue
            }
            switch lanes.admit(laneOf(item)) {
            case .send:
                next += 1
                send.append(item)
            case .deferred(let why):
                next += 1
                if parked.count < maxParked {
                    parked.append(item)
                } else {
                    deferred.append(item)
                    putBack.append(why.rawValue)
                }
            case .full:
                break dispatch
            }
        }
        if next == queue.count, next > 0 {
            queue.removeAll(keepingCapacity: true)
            next = 0
        }
        return (send, putBack)
    }
}
