import Hummingbird

extension RequestContext {
    /// The matched route's template (`/cal/{file}`), Hummingbird's `NotFound` when no route
    /// matched, `unmatched` before routing: what spans, metrics and the operations page record
    /// of a request's path. Never the path itself, which may hold a secret (a feed token, an
    /// invitation code).
    var routeTemplate: String { endpointPath ?? "unmatched" }
}
