import HeapModule

/// A hierarchical timing wheel (Varghese & Lauck scheme 7, in the form of Kafka's purgatory
/// timer): O(1) schedule and cancel by key, and an `advance(to:)` that never walks empty slots.
///
/// Level `i` has `slotsPerLevel` buckets of `tick · slotsPerLevel^i` milliseconds. A timer goes to
/// the lowest level whose span covers it; when time reaches a higher-level bucket, its timers
/// cascade to lower levels (each timer moves at most `levels` times). Only non-empty buckets
/// sit in a small heap ordered by expiration, so advancing over an hour of empty ticks costs
/// nothing. Timers live in an arena of structs linked by index (no allocation per timer) with
/// an open-addressing table from key to slot. Pure: time only moves through ``advance(to:)``.
public struct TimingWheel: Sendable {
    /// A due timer.
    public struct Entry: Sendable, Equatable, Comparable {
        public var key: UInt64
        /// Milliseconds (same clock as the wheel's).
        public var deadline: Int64

        public static func < (a: Entry, b: Entry) -> Bool {
            a.deadline != b.deadline ? a.deadline < b.deadline : a.key < b.key
        }
    }

    struct Node {
        var key: UInt64
        var deadline: Int64
        var prev: Int32
        var next: Int32
        /// `level * slots + slot`, ``overdueBucket``, or ``freeBucket``.
        var bucket: Int32
    }

    static let freeBucket: Int32 = -1
    static let overdueBucket: Int32 = -2
    /// Timers in the current lowest-level tick but after the last `advance` time.
    static let nearBucket: Int32 = -3

    struct BucketRef: Comparable {
        var expiration: Int64
        var bucket: Int32
        static func < (a: BucketRef, b: BucketRef) -> Bool { a.expiration < b.expiration }
    }

    /// Milliseconds per tick of the lowest level.
    public let tick: Int64
    /// Slots per level (a power of two).
    public let slotsPerLevel: Int
    /// Number of levels; beyond the top level's span timers wait in its last bucket and are
    /// re-placed as time advances.
    public let levels: Int

    /// The wheel's current time, in milliseconds.
    public private(set) var now: Int64

    var nodes: [Node] = []
    var freeHead: Int32 = -1
    var heads: [Int32]
    var expirations: [Int64]
    var heap = Heap<BucketRef>()
    var overdueHead: Int32 = -1
    var nearHead: Int32 = -1
    var index = KeyIndex()
    public private(set) var count = 0

    /// A wheel starting at `now` milliseconds, `tick` ms per lowest-level slot.
    public init(now: Int64, tick: Int64 = 10, slotsPerLevel: Int = 64, levels: Int = 6) {
        precondition(tick > 0 && slotsPerLevel >= 2 && slotsPerLevel & (slotsPerLevel - 1) == 0 && levels >= 1)
        self.now = now
        self.tick = tick
        self.slotsPerLevel = slotsPerLevel
        self.levels = levels
        heads = [Int32](repeating: -1, count: slotsPerLevel * levels)
        expirations = [Int64](repeating: Int64.min, count: slotsPerLevel * levels)
    }

    /// Reserves room for `n` timers (avoids regrowth during bulk loads).
    public mutating func reserveCapacity(_ n: Int) {
        nodes.reserveCapacity(n)
        index.reserve(n)
    }

    // MARK: - Schedule and cancel

    /// Schedules `key` at `deadline` (ms); a key already scheduled moves there. O(1).
    public mutating func schedule(key: UInt64, at deadline: Int64) {
        if let existing = index.find(key) {
            unlink(existing)
            nodes[Int(existing)].deadline = deadline
            place(existing)
            return
        }
        let slot: Int32
        if freeHead >= 0 {
            slot = freeHead
            freeHead = nodes[Int(slot)].next
            nodes[Int(slot)] = Node(key: key, deadline: deadline, prev: -1, next: -1, bucket: Self.freeBucket)
        } else {
            slot = Int32(nodes.count)
            nodes.append(Node(key: key, deadline: deadline, prev: -1, next: -1, bucket: Self.freeBucket))
        }
        index.insert(key, slot)
        count += 1
        place(slot)
    }

    /// Removes `key`; returns whether it was scheduled. O(1).
    @discardableResult
    public mutating func cancel(key: UInt64) -> Bool {
        guard let slot = index.remove(key) else { return false }
        unlink(slot)
        release(slot)
        return true
    }

    /// The deadline of `key`, if scheduled.
    public func deadline(of key: UInt64) -> Int64? {
        index.find(key).map { nodes[Int($0)].deadline }
    }

    /// Whether `key` is scheduled.
    public func contains(_ key: UInt64) -> Bool { index.find(key) != nil }

    // MARK: - Advancing

    /// Moves time to `time` and returns the timers whose deadline is at or before it, in
    /// deadline order (ties by key).
    public mutating func advance(to time: Int64) -> [Entry] {
        var out: [Entry] = []
        advance(to: time, into: &out)
        return out
    }

    /// Moves time to `time`, appending the due timers to `out` in deadline order.
    public mutating func advance(to time: Int64, into out: inout [Entry]) {
        let start = out.count
        drainOverdue(into: &out)
        drainNear(upTo: time, into: &out)
        while let top = heap.min, top.expiration <= time {
            heap.removeMin()
            let b = Int(top.bucket)
            guard expirations[b] == top.expiration else { continue }  // a stale heap entry
            expirations[b] = Int64.min
            if top.expiration > now { now = top.expiration }
            var cursor = heads[b]
            heads[b] = -1
            while cursor >= 0 {
                let next = nodes[Int(cursor)].next
                nodes[Int(cursor)].prev = -1
                nodes[Int(cursor)].next = -1
                nodes[Int(cursor)].bucket = Self.freeBucket
                if nodes[Int(cursor)].deadline <= time {
                    take(cursor, into: &out)
                } else {
                    place(cursor)
                }
                cursor = next
            }
            drainOverdue(into: &out)
        }
        if time > now { now = time }
        drainOverdue(into: &out)
        drainNear(upTo: time, into: &out)
        if out.count - start > 1 { out[start...].sort() }
    }

    /// The earliest moment something may be due (the earliest non-empty bucket), for a
    /// driver that sleeps until then. Nil when empty.
    public var nextExpiration: Int64? {
        if overdueHead >= 0 { return now }
        if nearHead >= 0 {
            var earliest = Int64.max
            var c = nearHead
            while c >= 0 {
                earliest = min(earliest, nodes[Int(c)].deadline)
                c = nodes[Int(c)].next
            }
            return earliest
        }
        var h = heap
        while let top = h.min {
            if expirations[Int(top.bucket)] == top.expiration { return top.expiration }
            h.removeMin()
        }
        return nil
    }

    // MARK: - Memory

    /// Bytes held for timers: the node arena and the key index, by their capacity.
    public var memoryBytes: Int {
        nodes.capacity * MemoryLayout<Node>.stride + index.memoryBytes
            + heads.capacity * 4 + expirations.capacity * 8 + heap.count * MemoryLayout<BucketRef>.stride
    }

    /// ``memoryBytes`` per pending timer.
    public var bytesPerTimer: Double { count == 0 ? 0 : Double(memoryBytes) / Double(count) }

    // MARK: - Internals

    private mutating func take(_ slot: Int32, into out: inout [Entry]) {
        let node = nodes[Int(slot)]
        out.append(Entry(key: node.key, deadline: node.deadline))
        index.remove(node.key)
        release(slot)
    }

    private mutating func release(_ slot: Int32) {
        nodes[Int(slot)].bucket = Self.freeBucket
        nodes[Int(slot)].prev = -1
        nodes[Int(slot)].next = freeHead
        freeHead = slot
        count -= 1
    }

    private mutating func drainOverdue(into out: inout [Entry]) {
        while overdueHead >= 0 {
            let slot = overdueHead
            overdueHead = nodes[Int(slot)].next
            take(slot, into: &out)
        }
        overdueHead = -1
    }

    /// Takes the near timers due by `time`.
    private mutating func drainNear(upTo time: Int64, into out: inout [Entry]) {
        var c = nearHead
        while c >= 0 {
            let next = nodes[Int(c)].next
            if nodes[Int(c)].deadline <= time {
                unlink(c)
                take(c, into: &out)
            }
            c = next
        }
    }

    /// Puts a detached node in the bucket its deadline belongs to.
    private mutating func place(_ slot: Int32) {
        let deadline = nodes[Int(slot)].deadline
        if deadline <= now {
            link(slot, bucket: Self.overdueBucket)
            return
        }
        if deadline < now - now % tick + tick {
            link(slot, bucket: Self.nearBucket)
            return
        }
        var span = tick  // duration of one slot at this level
        let slots = Int64(slotsPerLevel)
        for level in 0..<levels {
            let levelStart = now - now % span
            if deadline < levelStart + span * slots || level == levels - 1 {
                let virtualID = (level == levels - 1 && deadline >= levelStart + span * slots)
                    ? (levelStart / span + slots - 1) : deadline / span
                let b = level * slotsPerLevel + Int(virtualID % slots)
                let expiration = virtualID * span
                link(slot, bucket: Int32(b))
                if expirations[b] != expiration {
                    expirations[b] = expiration
                    heap.insert(BucketRef(expiration: expiration, bucket: Int32(b)))
                }
                return
            }
            span *= slots
        }
    }

    private mutating func link(_ slot: Int32, bucket: Int32) {
        nodes[Int(slot)].bucket = bucket
        nodes[Int(slot)].prev = -1
        let head = bucket == Self.overdueBucket ? overdueHead : bucket == Self.nearBucket ? nearHead : heads[Int(bucket)]
        nodes[Int(slot)].next = head
        if head >= 0 { nodes[Int(head)].prev = slot }
        if bucket == Self.overdueBucket {
            overdueHead = slot
        } else if bucket == Self.nearBucket {
            nearHead = slot
        } else {
            heads[Int(bucket)] = slot
        }
    }

    private mutating func unlink(_ slot: Int32) {
        let node = nodes[Int(slot)]
        if node.prev >= 0 {
            nodes[Int(node.prev)].next = node.next
        } else if node.bucket == Self.overdueBucket {
            overdueHead = node.next
        } else if node.bucket == Self.nearBucket {
            nearHead = node.next
        } else if node.bucket >= 0 {
            heads[Int(node.bucket)] = node.next
        }
        if node.next >= 0 { nodes[Int(node.next)].prev = node.prev }
        nodes[Int(slot)].prev = -1
        nodes[Int(slot)].next = -1
        nodes[Int(slot)].bucket = Self.freeBucket
    }
}

/// Open addressing (linear probing, backward-shift deletion) from a 64-bit key to an arena slot.
struct KeyIndex: Sendable {
    var keys: [UInt64] = []
    var slots: [Int32] = []
    var count = 0
    var mask = 0

    var memoryBytes: Int { keys.capacity * 8 + slots.capacity * 4 }

    mutating func reserve(_ n: Int) {
        var size = 16
        while Double(n) > Double(size) * 0.75 { size <<= 1 }
        if size > keys.count { rehash(size) }
    }

    @inline(__always) func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 20) & mask
    }

    func find(_ key: UInt64) -> Int32? {
        guard count > 0 else { return nil }
        var i = home(key)
        while slots[i] >= 0 {
            if keys[i] == key { return slots[i] }
            i = (i + 1) & mask
        }
        return nil
    }

    mutating func insert(_ key: UInt64, _ slot: Int32) {
        if keys.isEmpty || Double(count + 1) > Double(keys.count) * 0.75 { rehash(max(16, keys.count * 2)) }
        var i = home(key)
        while slots[i] >= 0 {
            if keys[i] == key {
                slots[i] = slot
                return
            }
            i = (i + 1) & mask
        }
        keys[i] = key
        slots[i] = slot
        count += 1
    }

    @discardableResult
    mutating func remove(_ key: UInt64) -> Int32? {
        guard count > 0 else { return nil }
        var i = home(key)
        while slots[i] >= 0 {
            if keys[i] == key {
                let removed = slots[i]
                // Backward shift: pull later entries of the run into the hole.
                var hole = i
                var j = (i + 1) & mask
                while slots[j] >= 0 {
                    let h = home(keys[j])
                    let between = hole <= j ? (h > hole && h <= j) : (h > hole || h <= j)
                    if !between {
                        keys[hole] = keys[j]
                        slots[hole] = slots[j]
                        hole = j
                    }
                    j = (j + 1) & mask
                }
                slots[hole] = -1
                count -= 1
                return removed
            }
            i = (i + 1) & mask
        }
        return nil
    }

    private mutating func rehash(_ size: Int) {
        let oldKeys = keys
        let oldSlots = slots
        keys = [UInt64](repeating: 0, count: size)
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
        count = 0
        for k in 0..<oldKeys.count where oldSlots[k] >= 0 {
            var i = home(oldKeys[k])
            while slots[i] >= 0 { i = (i + 1) & mask }
            keys[i] = oldKeys[k]
            slots[i] = oldSlots[k]
            count += 1
        }
    }
}
