import Foundation
import Synchronization

/// The envelopes this process committed to its outbox, by event id, so the relay sends them
/// without reading them back from PostgreSQL.
///
/// ``OutboxWriter/rows(_:)`` remembers a transaction's envelopes once it commits (through
/// ``CommitHooks``), or, numbered at commit (``EventsAtCommit``), when they are handed over
/// (the relay then reads only committed rows, and a rolled-back transaction's ids never
/// appear); the relay takes them when it sends their rows and reads from the table
/// only those it does not find: rows another process wrote (a scheduler replica), rows left
/// from before a restart, rows numbered before the hook ran. An event id is written once, so a
/// remembered envelope is the committed one. Bounded: it keeps two generations of about
/// `capacity / 2` entries and drops the older one whole when the newer one fills: entries the
/// relay never takes (rows another replica numbered, a transaction PostgreSQL rolled back
/// without an error) age out, and a single commit of more than a generation keeps only its last
/// ones (the others are read from the table). The bound counts envelopes, not bytes.
final class RelayBodyCache: Sendable {
    private struct State {
        var current: [String: Data] = [:]
        var previous: [String: Data] = [:]
    }

    private let state = Mutex(State())
    private let generation: Int

    init(capacity: Int) {
        generation = max(1, capacity / 2)
    }

    /// Remembers committed envelopes (`bodies[i]` is the envelope of event `ids[i]`).
    func remember(ids: [String], bodies: [Data]) {
        state.withLock { s in
            for (id, body) in zip(ids, bodies) {
                s.current[id] = body
                if s.current.count >= generation {
                    s.previous = s.current
                    s.current = [:]
                }
            }
        }
    }

    /// The remembered envelopes of `ids`, in order (nil where none), each forgotten as taken.
    func take(_ ids: [String]) -> [Data?] {
        state.withLock { s in
            ids.map { s.current.removeValue(forKey: $0) ?? s.previous.removeValue(forKey: $0) }
        }
    }

    /// How many envelopes are remembered.
    var count: Int { state.withLock { $0.current.count + $0.previous.count } }
}
