extension Optional {
    /// `map` for an async transform.
    public func asyncMap<U>(_ f: (Wrapped) async throws -> U) async rethrows -> U? {
        guard let v = self else { return nil }
        return try await f(v)
    }
}
