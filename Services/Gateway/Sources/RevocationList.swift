import Contracts
import Foundation
import Messaging
import Synchronization

/// The sessions whose access tokens the gateway refuses: loaded from the accounts service at
/// start (`accounts.revocations`, with the stream position it reflects), then kept current from
/// the accounts event stream, so a logout or a reused refresh token takes effect at once.
/// Held in memory: a restarted gateway loads it again.
final class RevocationList: EventApplier {
    private let revoked = Mutex<[String: Date]>([:])
    private let start = Mutex<Int64?>(nil)
    private let accounts: RPCClient
    private let retention: TimeInterval

    init(accounts: RPCClient, accessTTL: Duration) {
        self.accounts = accounts
        self.retention = Double(accessTTL.components.seconds) + 120
    }

    /// Refuses `session` from now on in this gateway (a sign-out or a deletion it forwarded and
    /// accounts confirmed), before the accounts stream brings the same news to every replica.
    func revoke(_ session: String) {
        revoked.withLock { $0[session] = Date() }
    }

    func isRevoked(_ session: String) -> Bool {
        revoked.withLock { $0[session] != nil }
    }

    /// Revocations are kept in memory as they came: a rewound accounts stream is followed.
    var followsRewinds: Bool { true }

    func checkpoint(stream: String) async throws -> Int64 {
        if let s = start.withLock({ $0 }) { return s }
        let snapshot = try await accounts.call(AccountsMethods.Revocations.self, Empty(), timeout: .seconds(3))
        let now = Date()
        revoked.withLock { r in for s in snapshot.sessions { r[s] = now } }
        start.withLock { $0 = snapshot.head }
        return snapshot.head
    }

    /// Other types of the stream are not this list's business, whatever their version; a
    /// revocation of a newer version than this build reads stops the consumer there (a missed
    /// revocation would leave a session usable).
    func apply(stream: String, events: [DeliveredEvent]) async throws {
        let revocation = AccountsEvents.sessionRevoked
        if let i = events.firstIndex(where: { $0.envelope.type == revocation.type && $0.envelope.version > revocation.version }) {
            try await apply(stream: stream, events: Array(events[..<i]))
            let e = events[i]
            throw ConsumerBlocked(stream: stream, seq: e.seq, type: e.envelope.type, version: e.envelope.version,
                                  reason: "\(e.envelope.type) version \(e.envelope.version) is newer than this build reads (\(revocation.version))")
        }
        let now = Date()
        revoked.withLock { r in
            for e in events where e.envelope.type == revocation.type {
                if let p = try? e.envelope.decodePayload(AccountsEvents.SessionRevoked.self) { r[p.session] = now }
            }
            r = r.filter { now.timeIntervalSince($0.value) < retention }
        }
    }

    func deadLetter(stream: String, seq: Int64, type: String?, raw: String, reason: String) async throws {}

    func skip(stream: String, to seq: Int64, reason: String) async throws {}
}
