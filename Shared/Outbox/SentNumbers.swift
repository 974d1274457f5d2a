/// The event id a relay sent under each of its last numbers: where a stream whose head went
/// back under the relay is read on from (``OutboxRelay``). A failover to a standby that had not
/// received the last commits numbers new events again from its head; comparing the table's
/// rows with what went out under those numbers finds the first new one. Pure.
struct SentNumbers: Sendable {
    /// How many numbers it remembers (the deepest rewind it places exactly).
    let capacity: Int
    private var ids: [Int64: String] = [:]
    private var order: [Int64] = []
    private var start = 0

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// Notes that `id` went out as number `seq`.
    mutating func sent(_ seq: Int64, _ id: String) {
        if ids.updateValue(id, forKey: seq) == nil { order.append(seq) }
        while order.count - start > capacity {
            ids[order[start]] = nil
            start += 1
        }
        if start > capacity {
            order.removeFirst(start)
            start = 0
        }
    }

    /// The event sent under `seq`, if remembered.
    func id(at seq: Int64) -> String? { ids[seq] }

    /// The lowest number remembered.
    var lowest: Int64? { start < order.count ? order[start...].min() : nil }

    /// Where to read on from once the stream's head went back to `head`: given the table's rows
    /// from just below the lowest remembered number up to `head`, in number order, the last
    /// number of the run that matches what was sent (the rows after it are new events); the
    /// number before the lowest remembered when even the first differs or nothing is remembered.
    func readOnAfter(head: Int64, rows: [(seq: Int64, id: String)]) -> Int64 {
        guard let lowest else { return head }
        var at = min(head, lowest - 1)
        for row in rows where row.seq >= lowest && row.seq <= head {
            guard ids[row.seq] == row.id, row.seq == at + 1 else { break }
            at = row.seq
        }
        return at
    }
}
