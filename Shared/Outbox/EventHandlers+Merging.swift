/// Two sets of handlers on one stream (a service's own and, say, its analytics): one consumer,
/// one checkpoint, one transaction per delivery.
extension EventHandlers {
    /// `self`'s handlers and `other`'s; for a type both handle, `self`'s runs first and then
    /// `other`'s, in the same transaction. A type must be handled the same way in both (one by
    /// one, or in batches with the same set of types).
    public func merging(_ other: EventHandlers) -> EventHandlers {
        precondition(stream == other.stream, "merging handlers of the \(stream) and \(other.stream) streams")
        var merged = self
        merged.ignored = ignored.union(other.ignored)
        for (type, handler) in other.handlers {
            precondition(batchHandlers[type] == nil, "\(type) is handled in batches on one side and one by one on the other")
            if let mine = handlers[type] {
                merged.handlers[type] = { context, connection in
                    try await mine(context, connection)
                    try await handler(context, connection)
                }
            } else {
                merged.handlers[type] = handler
            }
        }
        for (type, entry) in other.batchHandlers {
            precondition(handlers[type] == nil, "\(type) is handled one by one on one side and in batches on the other")
            if let mine = batchHandlers[type] {
                precondition(mine.key == entry.key, "\(type) is batched with different types on each side")
                merged.batchHandlers[type] = (mine.key, { run, connection in
                    try await mine.handler(run, connection)
                    try await entry.handler(run, connection)
                })
            } else {
                merged.batchHandlers[type] = entry
            }
        }
        return merged
    }
}
