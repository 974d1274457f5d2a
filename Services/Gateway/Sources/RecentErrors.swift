import Foundation
import Synchronization

/// The last server-side failures the gateway answered (5xx), newest first, for the operations
/// page: when, which route, the code and message, and the trace id to look up.
final class RecentErrors: Sendable {
    struct Entry: Codable, Sendable, Equatable {
        var at: Date
        var method: String
        /// The route's template (`/cal/{file}`, `NotFound`), never the request's path.
        var path: String
        var status: Int
        var code: String
        var message: String
        var traceId: String?
    }

    private let entries = Mutex<[Entry]>([])
    let capacity: Int

    init(capacity: Int = 50) { self.capacity = capacity }

    func record(_ entry: Entry) {
        entries.withLock { list in
            list.insert(entry, at: 0)
            if list.count > capacity { list.removeLast(list.count - capacity) }
        }
    }

    var all: [Entry] { entries.withLock { $0 } }
}
