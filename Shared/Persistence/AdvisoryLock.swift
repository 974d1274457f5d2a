import Logging
import PostgresNIO

/// How an advisory lock's name becomes its key. The name and the hash together are the lock's
/// identity: two spellings of one name would not exclude each other.
public enum AdvisoryLockHash: Sendable {
    /// `hashtextextended(name, 0)`, 64 bits: every lock taken since the helper exists.
    case extended
    /// `hashtext(name)`, 32 bits: two older locks (an inviter's invitations, a user's paid
    /// snoozes) keep it, so a replica of the previous release still excludes a new one.
    case legacy32
}

extension PostgresConnection {
    /// Takes the advisory lock named `key` for the rest of the transaction
    /// (`pg_advisory_xact_lock(hashtextextended(key, 0))`, or `hashtext(key)` for a
    /// ``AdvisoryLockHash/legacy32`` lock): writers that must not interleave (one owner's
    /// alarms, one inviter's invitations, a schema's migrations) each take it first, and it is
    /// released by the commit or the rollback, never by hand. The suite's one home for it (the
    /// notifications inbox's bucketed locks, taken many at once in key order, are their own).
    ///
    /// `shared`: many holders at once, excluding only the exclusive holder of the same key
    /// (`pg_advisory_xact_lock_shared`): readers of something a writer changes as a whole.
    public func lockUntilCommit(_ key: String, hash: AdvisoryLockHash = .extended, shared: Bool = false, logger: Logger) async throws {
        switch (hash, shared) {
        case (.extended, false): _ = try await query("SELECT pg_advisory_xact_lock(hashtextextended(\(key), 0))", logger: logger).drain()
        case (.extended, true): _ = try await query("SELECT pg_advisory_xact_lock_shared(hashtextextended(\(key), 0))", logger: logger).drain()
        case (.legacy32, false): _ = try await query("SELECT pg_advisory_xact_lock(hashtext(\(key)))", logger: logger).drain()
        case (.legacy32, true): _ = try await query("SELECT pg_advisory_xact_lock_shared(hashtext(\(key)))", logger: logger).drain()
        }
    }
}
