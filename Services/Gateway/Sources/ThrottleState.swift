import Contracts
import Foundation
import GatewayCore
import Messaging
import Synchronization

/// Where ``AuthThrottle``'s buckets and login failures live.
protocol ThrottleState: Sendable {
    /// Takes a token from `key`'s bucket named `bucket`: nil, or the seconds until one is there.
    func take(_ bucket: String, _ key: String, perHour: Int, now: Date) async -> Int?
    /// Gives a token back to `key`'s bucket named `bucket`.
    func refund(_ bucket: String, _ key: String, perHour: Int) async
    /// The seconds `account` from `address`, or `address` itself, still backs off (nil: none).
    func loginWait(account: String, address: String, now: Date) async -> Int?
    /// Records a login's outcome.
    func loginOutcome(account: String, address: String, succeeded: Bool, limits: AuthThrottle.Limits, now: Date) async
}

/// The counts in this process's memory (`CHRONIR_THROTTLE_STATE=local`): each gateway replica
/// counts alone, and a restart forgets. The counting is a ``ThrottleLedger`` (GatewayCore) under a
/// lock. Also what ``SharedThrottleState`` falls back on while accounts does not answer.
final class LocalThrottleState: ThrottleState {
    private let ledger: Mutex<ThrottleLedger>

    init(maxEntries: Int = 500_000) {
        self.ledger = Mutex(ThrottleLedger(maxEntries: maxEntries))
    }

    func take(_ bucket: String, _ key: String, perHour: Int, now: Date) async -> Int? {
        ledger.withLock { $0.take(ThrottleTake(bucket, key, perHour: perHour), now: now) }
    }

    func refund(_ bucket: String, _ key: String, perHour: Int) async {
        ledger.withLock { $0.refund(ThrottleTake(bucket, key, perHour: perHour)) }
    }

    func loginWait(account: String, address: String, now: Date) async -> Int? {
        ledger.withLock { $0.loginWait(account: account, address: address, now: now) }
    }

    func loginOutcome(account: String, address: String, succeeded: Bool, limits: AuthThrottle.Limits, now: Date) async {
        ledger.withLock { $0.loginOutcome(account: account, address: address, succeeded: succeeded, limits: limits, now: now) }
    }
}

/// The counts every gateway replica shares (`CHRONIR_THROTTLE_STATE=shared`, the default):
/// kept by accounts in PostgreSQL (``ThrottleMethods``), so N replicas allow what one does and a
/// restart forgets nothing. One RPC per limited request (two per login). While accounts does
/// not answer, the replica counts in its own memory (``LocalThrottleState``), counted in
/// `chronir_gateway_throttle_fallbacks_total`: a limit is never a reason to refuse service.
///
/// A refusal is remembered here until its `Retry-After` passes: no token can come back before
/// then (buckets refill on the clock, and only a confirmation that succeeds gives one back,
/// which a refused caller cannot make), so a flood past a limit costs this replica a lookup, not
/// an RPC and a transaction each (`scripts/link-flood.sh`).
final class SharedThrottleState: ThrottleState {
    private let accounts: RPCClient
    private let local = LocalThrottleState()
    private let refused = Mutex<[String: Date]>([:])
    private let telemetry: Telemetry
    private let timeout: Duration

    init(accounts: RPCClient, telemetry: Telemetry, timeout: Duration = .seconds(2)) {
        self.accounts = accounts
        self.telemetry = telemetry
        self.timeout = timeout
    }

    private func fellBack() {
        telemetry.counter("chronir_gateway_throttle_fallbacks_total").increment()
    }

    /// The seconds a refusal remembered under `id` still holds, if any.
    private func remembered(_ id: String, now: Date) -> Int? {
        refused.withLock { r in
            guard let until = r[id] else { return nil }
            if until <= now { r[id] = nil }
            return ThrottleRules.wait(until: until, now: now)
        }
    }

    /// Remembers a refusal under `id` for `wait` seconds (none: forgets it).
    private func remember(_ id: String, wait: Int?, now: Date) {
        refused.withLock { r in
            if r.count > 100_000 { r = r.filter { $0.value > now } }
            r[id] = wait.map { now.addingTimeInterval(Double($0)) }
        }
    }

    func take(_ bucket: String, _ key: String, perHour: Int, now: Date) async -> Int? {
        let id = bucket + "\u{0}" + key
        if let wait = remembered(id, now: now) { return wait }
        do {
            let wait = try await accounts.call(ThrottleMethods.Take.self, .init(bucket: bucket, key: key, perHour: perHour), timeout: timeout)
                .retryAfterSeconds
            if wait != nil { remember(id, wait: wait, now: now) }
            return wait
        } catch {
            fellBack()
            return await local.take(bucket, key, perHour: perHour, now: now)
        }
    }

    func refund(_ bucket: String, _ key: String, perHour: Int) async {
        do {
            _ = try await accounts.call(ThrottleMethods.Take.self, .init(bucket: bucket, key: key, perHour: perHour, refund: true),
                                        timeout: timeout)
        } catch {
            fellBack()
            await local.refund(bucket, key, perHour: perHour)
        }
    }

    func loginWait(account: String, address: String, now: Date) async -> Int? {
        let id = "login\u{0}" + ThrottleRules.pair(account: account, address: address)
        if let wait = remembered(id, now: now) { return wait }
        do {
            let wait = try await accounts.call(ThrottleMethods.LoginWait.self, .init(account: account, address: address), timeout: timeout)
                .retryAfterSeconds
            if wait != nil { remember(id, wait: wait, now: now) }
            return wait
        } catch {
            fellBack()
            return await local.loginWait(account: account, address: address, now: now)
        }
    }

    func loginOutcome(account: String, address: String, succeeded: Bool, limits: AuthThrottle.Limits, now: Date) async {
        do {
            _ = try await accounts.call(ThrottleMethods.LoginOutcome.self,
                                        .init(account: account, address: address, succeeded: succeeded,
                                              accountFailuresFree: limits.accountFailuresFree, addressFailuresFree: limits.addressFailuresFree,
                                              maxBackoffSeconds: limits.maxBackoffSeconds),
                                        timeout: timeout)
        } catch {
            fellBack()
            await local.loginOutcome(account: account, address: address, succeeded: succeeded, limits: limits, now: now)
        }
    }
}
