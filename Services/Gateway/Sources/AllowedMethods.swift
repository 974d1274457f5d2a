import Hummingbird
import Synchronization

/// The methods each route path takes, read from the router once every route is registered:
/// a request for a known path with another method is answered 405 `CA031` with `Allow`.
final class AllowedMethods: Sendable {
    private struct Route: Sendable {
        let segments: [Substring]
        var methods: Set<String>
    }
    private let routes = Mutex<[Route]>([])

    /// Records the routes of `router` (call after the last route is added).
    func load<Context>(from router: Router<Context>) {
        var table: [String: Route] = [:]
        for r in router.routes {
            let path = "\(r.path)"
            var route = table[path] ?? Route(segments: Self.split(path), methods: [])
            route.methods.insert(r.method.rawValue)
            table[path] = route
        }
        routes.withLock { $0 = Array(table.values) }
    }

    /// The methods taken by `path` (sorted), or nil when no route has this path.
    func methods(for path: String) -> [String]? {
        let parts = Self.split(path)
        let found = routes.withLock { table -> Set<String> in
            var all: Set<String> = []
            for r in table where r.segments.count == parts.count {
                if zip(r.segments, parts).allSatisfy({ $0.hasPrefix(":") || $0 == "*" || $0 == $1 }) { all.formUnion(r.methods) }
            }
            return all
        }
        return found.isEmpty ? nil : found.sorted()
    }

    private static func split(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
