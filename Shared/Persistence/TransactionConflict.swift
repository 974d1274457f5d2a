/// Thrown by a transaction's body that met a conflict it must not wait out (a lock it may only
/// try, because waiting for it could deadlock): ``Database/transaction(isolation:_:)`` rolls the
/// attempt back and runs the body again, as after a deadlock (40P01), up to 3 tries; after
/// that it throws, and callers treat it as transient.
public struct TransactionConflict: Error, CustomStringConvertible {
    /// What was busy.
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { "transaction conflict: \(reason)" }
}
