import Foundation
import GatewayCore
import Testing

/// The throttle's admissions (``ThrottleAdmission``) decided against a ``ThrottleLedger``, with
/// no gateway: which buckets each request takes, in which order, under which keys, and what a
/// refusal gives back. The process tests keep what needs a gateway (the 429 and its header,
/// the state shared through accounts).
@Suite("Throttle admissions")
struct ThrottleAdmissionTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func limits() -> ThrottleLimits {
        var l = ThrottleLimits()
        l.passwordLinksPerHour = 2
        l.signupsPerAddressPerHour = 2
        l.tokenConfirmsPerAddressPerHour = 2
        l.alarmEditsPerAlarmPerHour = 2
        l.alarmEditsPerUserPerHour = 3
        l.addressFailuresFree = 2
        l.ipv6PrefixShare = 3
        return l
    }

    /// A ledger under a class, so the async decision can take from it.
    final class Counts: @unchecked Sendable {
        var ledger = ThrottleLedger()
        var taken: [ThrottleTake] = []
        var refunded: [ThrottleTake] = []

        func admit(_ a: ThrottleAdmission, _ limits: ThrottleLimits = ThrottleAdmissionTests.limits(),
                   now: Date = ThrottleAdmissionTests.t0) async -> ThrottleRefusal? {
            await ThrottleAdmission.decide(a.steps(limits)) { t in
                let wait = ledger.take(t, now: now)
                if wait == nil { taken.append(t) }
                return wait
            } refund: { t in
                refunded.append(t)
                ledger.refund(t)
            }
        }
    }

    @Test("each admission's buckets, keys and sizes", arguments: [
        (ThrottleAdmission.signup(address: "203.0.113.9"), ["signups|203.0.113.9|2"]),
        (.signup(address: "2001:db8:5:1::/64"), ["signups|2001:db8:5:1::/64|2", "signups|2001:db8:5::/48|6"]),
        (.tokenConfirm(address: "2001:db8:5:1::/64"), ["confirms|2001:db8:5:1::/64|2", "confirms|2001:db8:5::/48|6"]),
        (.alarmEdit(user: "u", alarm: "a"), ["alarmEdits|alarm:a:u|2", "alarmEdits|user:u|3"]),
        (.passwordLink(user: "u", address: "2001:db8:5:1::/64"),
         ["links|user:u|2", "linksByAddress|2001:db8:5:1::/64|2", "linksByAddress|2001:db8:5::/48|6"]),
        (.loginPrefix(address: "2001:db8:5:1::/64"), ["logins48|2001:db8:5::/48|6"]),
        (.loginPrefix(address: "203.0.113.9"), []),
        (.resetMail(email: "a@example.com"), ["resetMails|a@example.com|5"]),
        (.export(user: "u"), ["exports|u|6"]),
    ] as [(ThrottleAdmission, [String])])
    func steps(admission: ThrottleAdmission, expected: [String]) {
        let steps = admission.steps(Self.limits()).map { "\($0.take.bucket)|\($0.take.key)|\($0.take.perHour)" }
        #expect(steps == expected)
    }

    @Test("password links from a new /64 (and a new account) each time: the /48 stops them at its share; another /48 is served")
    func passwordLinksByPrefix() async {
        let c = Counts()
        var outcomes: [Bool] = []
        for i in 1...10 {
            outcomes.append(await c.admit(.passwordLink(user: "u\(i)", address: "2001:db8:5:\(String(i, radix: 16))::/64")) == nil)
        }
        #expect(outcomes.filter { $0 }.count == 6, "\(outcomes)")   // 2 an hour × a share of 3
        #expect(await c.admit(.passwordLink(user: "v", address: "2001:db8:6:1::/64")) == nil)
    }

    @Test("sign-ups and token confirmations: a /48 stops at its share; IPv4 addresses have no prefix bucket",
          arguments: ["signups", "confirms"])
    func otherBuckets(bucket: String) async {
        let c = Counts()
        func take(_ address: String) async -> Bool {
            await c.admit(bucket == "signups" ? .signup(address: address) : .tokenConfirm(address: address)) == nil
        }
        var v6: [Bool] = []
        for i in 1...10 { v6.append(await take("2001:db8:7:\(String(i, radix: 16))::/64")) }
        #expect(v6.filter { $0 }.count == 6, "\(v6)")
        var v4: [Bool] = []
        for i in 1...10 { v4.append(await take("203.0.113.\(i)")) }
        #expect(v4.allSatisfy { $0 }, "\(v4)")
    }

    @Test("a refusal gives back what the buckets before it took, and names its own bucket's message and wait")
    func refusalRefunds() async throws {
        let c = Counts()
        // The per-user bucket (3) runs out before the per-alarm ones (2 each): the third alarm's
        // first edit passes its alarm's bucket, meets the user's, and gives the alarm's back.
        for alarm in ["a", "a", "b"] { #expect(await c.admit(.alarmEdit(user: "u", alarm: alarm)) == nil) }
        let refusal = try #require(await c.admit(.alarmEdit(user: "u", alarm: "c")))
        #expect(refusal.message == "too many alarm edits from this account; try again later")
        #expect(refusal.retryAfter == 1200)   // 3 an hour: one every 1 200 s
        #expect(c.refunded == [ThrottleTake("alarmEdits", "alarm:c:u", perHour: 2)])
        // The alarm's bucket was given back: an hour on, alarm c takes its two edits.
        let later = Self.t0.addingTimeInterval(3600)
        #expect(await c.admit(.alarmEdit(user: "u", alarm: "c"), now: later) == nil)
        #expect(await c.admit(.alarmEdit(user: "u", alarm: "c"), now: later) == nil)
        let third = try #require(await c.admit(.alarmEdit(user: "u", alarm: "c"), now: later))
        #expect(third.message == "too many edits of this alarm; try again later")
    }

    @Test("a password link refused by its address gives the account's token back")
    func passwordLinkRefund() async throws {
        let c = Counts()
        for user in ["u", "v"] { #expect(await c.admit(.passwordLink(user: user, address: "203.0.113.9")) == nil) }
        _ = try #require(await c.admit(.passwordLink(user: "w", address: "203.0.113.9")))
        #expect(c.refunded == [ThrottleTake("links", "user:w", perHour: 2)])
        // w's own bucket is whole: from elsewhere, w gets two.
        for _ in 1...2 { #expect(await c.admit(.passwordLink(user: "w", address: "198.51.100.1")) == nil) }
    }

    @Test("the buckets refill evenly: a refused request may come back after the wait it was told, not before")
    func waitIsHonest() async throws {
        let c = Counts()
        for _ in 1...2 { #expect(await c.admit(.signup(address: "203.0.113.9")) == nil) }
        let refusal = try #require(await c.admit(.signup(address: "203.0.113.9")))
        #expect(refusal.retryAfter == 1800)
        let early = Self.t0.addingTimeInterval(Double(refusal.retryAfter) - 2)
        #expect(await c.admit(.signup(address: "203.0.113.9"), now: early) != nil)
        let onTime = Self.t0.addingTimeInterval(Double(refusal.retryAfter))
        #expect(await c.admit(.signup(address: "203.0.113.9"), now: onTime) == nil)
    }
}

/// The ledger's login back-off: per (account, address) and per address; a success clears the pair.
@Suite("Throttle ledger: failed logins")
struct ThrottleLedgerLoginTests {
    @Test("past the free failures the pair backs off 1, 2, 4 s; another address is not held back; a success clears the pair")
    func backoff() {
        var limits = ThrottleLimits()
        limits.accountFailuresFree = 2
        limits.addressFailuresFree = 100
        var ledger = ThrottleLedger()
        let t0 = ThrottleAdmissionTests.t0
        var waits: [Int?] = []
        for _ in 1...5 {
            ledger.loginOutcome(account: "a", address: "203.0.113.9", succeeded: false, limits: limits, now: t0)
            waits.append(ledger.loginWait(account: "a", address: "203.0.113.9", now: t0))
        }
        #expect(waits == [nil, nil, 1, 2, 4])
        #expect(ledger.loginWait(account: "a", address: "198.51.100.1", now: t0) == nil)
        ledger.loginOutcome(account: "a", address: "203.0.113.9", succeeded: true, limits: limits, now: t0)
        #expect(ledger.loginWait(account: "a", address: "203.0.113.9", now: t0) == nil)
    }

    @Test("past its cap the table drops what no longer counts (full buckets), and only that")
    func capped() {
        var ledger = ThrottleLedger(maxEntries: 100)
        let t0 = ThrottleAdmissionTests.t0
        for i in 0..<300 { _ = ledger.take(ThrottleTake("signups", "a\(i)", perHour: 20), now: t0) }
        let later = t0.addingTimeInterval(3601)
        for i in 0..<300 { _ = ledger.take(ThrottleTake("signups", "b\(i)", perHour: 20), now: later) }
        // The 300 of an hour before are full again and dropped; the 300 just taken still count.
        #expect(ledger.entries == 300, "\(ledger.entries)")
    }
}
