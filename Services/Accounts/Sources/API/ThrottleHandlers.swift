import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// The gateway's limits shared by its replicas (``ThrottleMethods``): token buckets and login
/// failures as rows, changed under their row locks with ``ThrottleRules``, on this service's
/// clock. A missing row is made first (`ON CONFLICT DO NOTHING`) so that two replicas' first
/// requests for one key queue on its lock instead of both counting from a full bucket. Rows
/// untouched for a day are swept (``sweep()``): a full bucket and forgotten failures read the
/// same as no row.
struct ThrottleHandlers: Sendable {
    let database: Database

    func register(into router: inout RPCRouter) {
        router.on(ThrottleMethods.Take.self) { request, _ in try await take(request) }
        router.on(ThrottleMethods.LoginWait.self) { request, _ in try await loginWait(request) }
        router.on(ThrottleMethods.LoginOutcome.self) { request, _ in try await loginOutcome(request) }
    }

    func take(_ r: ThrottleMethods.Take.Request) async throws -> ThrottleMethods.Take.Response {
        guard (1...10_000_000).contains(r.perHour), (1...64).contains(r.bucket.utf8.count), r.key.utf8.count <= 512 else {
            throw ServiceError(.validationFailed, "bucket (1…64 bytes), key (up to 512 bytes) and perHour (1…10 000 000) are required")
        }
        return try await database.transaction { c in
            let now = Date()
            try await c.query("""
                INSERT INTO throttle_buckets (bucket, key, tokens, at) VALUES (\(r.bucket), \(r.key), \(Double(r.perHour)), \(now))
                ON CONFLICT (bucket, key) DO NOTHING
                """, logger: database.logger)
            let rows = try await c.query("SELECT tokens, at FROM throttle_buckets WHERE bucket = \(r.bucket) AND key = \(r.key) FOR UPDATE",
                                         logger: database.logger)
            let stored = try await rows.decode((Double, Date).self).first(where: { _ in true }).map { ThrottleRules.Bucket(tokens: $0.0, at: $0.1) }
            let bucket: ThrottleRules.Bucket
            var wait: Int? = nil
            if r.refund == true {
                guard let stored else { return .init(retryAfterSeconds: nil) }
                bucket = ThrottleRules.refund(stored, perHour: r.perHour)
            } else {
                (bucket, wait) = ThrottleRules.take(stored, perHour: r.perHour, now: now)
            }
            try await c.query("""
                UPDATE throttle_buckets SET tokens = \(bucket.tokens), at = \(bucket.at) WHERE bucket = \(r.bucket) AND key = \(r.key)
                """, logger: database.logger)
            return .init(retryAfterSeconds: wait)
        }
    }

    /// Refuses an account or address that is empty or over 512 bytes (`CA016`).
    static func checkPair(_ account: String, _ address: String) throws {
        guard (1...512).contains(account.utf8.count), (1...512).contains(address.utf8.count) else {
            throw ServiceError(.validationFailed, "account and address are required, each up to 512 bytes")
        }
    }

    func loginWait(_ r: ThrottleMethods.LoginWait.Request) async throws -> ThrottleMethods.LoginWait.Response {
        try Self.checkPair(r.account, r.address)
        let rows = try await database.query("""
            SELECT max(locked_until) FROM throttle_failures WHERE key = \(Self.pairKey(r.account, r.address)) OR key = \(Self.addressKey(r.address))
            """)
        let until = try await rows.first(Date?.self) ?? nil
        return .init(retryAfterSeconds: ThrottleRules.wait(until: until, now: Date()))
    }

    func loginOutcome(_ r: ThrottleMethods.LoginOutcome.Request) async throws -> Empty {
        try Self.checkPair(r.account, r.address)
        guard (0...1_000_000).contains(r.accountFailuresFree), (0...1_000_000).contains(r.addressFailuresFree),
              (1...604_800).contains(r.maxBackoffSeconds) else {
            throw ServiceError(.validationFailed, "accountFailuresFree and addressFailuresFree must be 0…1 000 000, maxBackoffSeconds 1…604 800")
        }
        let pair = Self.pairKey(r.account, r.address)
        if r.succeeded {
            try await database.query("DELETE FROM throttle_failures WHERE key = \(pair)")
            return Empty()
        }
        try await database.transaction { c in
            let now = Date()
            for (key, free) in [(pair, r.accountFailuresFree), (Self.addressKey(r.address), r.addressFailuresFree)] {
                try await c.query("""
                    INSERT INTO throttle_failures (key, count, locked_until, at) VALUES (\(key), 0, '-infinity', \(now))
                    ON CONFLICT (key) DO NOTHING
                    """, logger: database.logger)
                let rows = try await c.query("SELECT count, locked_until, at FROM throttle_failures WHERE key = \(key) FOR UPDATE",
                                             logger: database.logger)
                let stored = try await rows.decode((Int32, Date, Date).self).first(where: { _ in true })
                    .map { ThrottleRules.Failures(count: Int($0.0), lockedUntil: $0.1, at: $0.2) }
                let f = ThrottleRules.bump(stored, free: free, maxBackoffSeconds: r.maxBackoffSeconds, now: now)
                try await c.query("""
                    UPDATE throttle_failures SET count = \(Int32(clamping: f.count)), locked_until = \(f.lockedUntil), at = \(f.at) WHERE key = \(key)
                    """, logger: database.logger)
            }
        }
        return Empty()
    }

    /// Deletes buckets and failures untouched for a day.
    func sweep() async throws {
        try await database.query("DELETE FROM throttle_buckets WHERE at < now() - interval '1 day'")
        try await database.query("DELETE FROM throttle_failures WHERE at < now() - interval '1 day'")
    }

    static func pairKey(_ account: String, _ address: String) -> String { "pair " + ThrottleRules.pair(account: account, address: address) }
    static func addressKey(_ address: String) -> String { "address " + address }
}
