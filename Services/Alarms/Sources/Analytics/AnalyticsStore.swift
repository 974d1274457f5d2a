import Contracts
import Crypto
import Foundation
import Logging
import Messaging
import Persistence
import PostgresNIO
import ServiceKit

/// The SQL of product analytics: users as keyed pseudonyms (`analytics_users`: signup day,
/// tier, when they first reached Plus and Premium) and their events (`analytics_events`).
struct AnalyticsStore: Sendable {
    let database: Database
    /// The HMAC key of the pseudonyms.
    let key: SymmetricKey
    var logger: Logger { database.logger }

    /// The key from `configured` (hex, at least 32 bytes), else the one kept in
    /// `analytics_key`, made at the first start.
    static func load(database: Database, configured: String?) async throws -> AnalyticsStore {
        if let configured {
            guard let key = Self.parseKey(configured) else { throw ServiceEnvironment.Invalid(Self.invalidKey) }
            return AnalyticsStore(database: database, key: key)
        }
        let fresh = ByteBuffer(bytes: Data.secureRandom(count: 32))
        try await database.query("INSERT INTO analytics_key (id, key) VALUES (1, \(fresh)) ON CONFLICT (id) DO NOTHING").drain()
        guard let stored = try await database.query("SELECT key FROM analytics_key WHERE id = 1").first(ByteBuffer.self) else {
            throw ServiceEnvironment.Invalid("analytics_key holds no key")
        }
        return AnalyticsStore(database: database, key: SymmetricKey(data: Data(buffer: stored)))
    }

    /// The key of a configured value (hex, at least 32 bytes), or nil when it is not one
    /// (``AlarmsConfig`` checks `CHRONIR_ANALYTICS_KEY` with it before anything connects).
    static func parseKey(_ configured: String) -> SymmetricKey? {
        guard configured.count >= 64, configured.count % 2 == 0, let bytes = Self.bytes(hex: configured) else { return nil }
        return SymmetricKey(data: bytes)
    }

    /// Why a configured key was refused.
    static let invalidKey = "CHRONIR_ANALYTICS_KEY must be at least 32 bytes in hex"

    private static func bytes(hex: String) -> Data? {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            data.append(byte)
            index = next
        }
        return data
    }

    /// The pseudonym of a uid: 128 bits of HMAC-SHA256 under the key, in hex.
    func pseudonym(_ uid: String) -> String {
        Hex.lowercase(HMAC<SHA256>.authenticationCode(for: Data(uid.utf8), using: key).prefix(16))
    }

    /// One event to record: `withTier` adds the user's current tier to its properties.
    struct Row: Sendable {
        var name: AnalyticsEventName
        var uid: String
        var at: Date
        var withTier: Bool
        var properties: [String: JSONValue]
    }

    /// Records `rows` in one statement, after one read of the tiers they need.
    func record(_ rows: [Row], on c: PostgresConnection) async throws {
        guard !rows.isEmpty else { return }
        let wanted = Array(Set(rows.filter(\.withTier).map(\.uid)))
        var tiers: [String: String] = [:]
        if !wanted.isEmpty {
            for try await (uid, tier) in try await c.prepared("SELECT user_id, tier FROM user_tiers WHERE user_id = ANY(\(wanted)::text[])",
                                                          logger: logger).decode((String, String).self) {
                tiers[uid] = tier
            }
        }
        var names: [String] = [], pseudonyms: [String] = [], ats: [Date] = [], props: [String] = []
        for row in rows {
            var properties = row.properties
            if row.withTier { properties["tier"] = .string(tiers[row.uid] ?? Tier.free.rawValue) }
            names.append(row.name.rawValue)
            pseudonyms.append(pseudonym(row.uid))
            ats.append(row.at)
            props.append(String(decoding: try JSONCoding.encode(JSONValue.object(properties)), as: UTF8.self))
        }
        try await c.prepared("""
            INSERT INTO analytics_events (name, pseudonym, occurred_at, day, properties)
            SELECT r.name, r.p, r.at, (r.at AT TIME ZONE 'UTC')::date, r.props::jsonb
            FROM unnest(\(names)::text[], \(pseudonyms)::text[], \(ats)::timestamptz[], \(props)::text[]) AS r(name, p, at, props)
            WHERE EXISTS (SELECT 1 FROM analytics_consent k WHERE k.pseudonym = r.p)
            """, logger: logger).drain()
    }

    /// Records one event of `uid` (when they consented).
    func record(_ name: AnalyticsEventName, uid: String, at: Date, properties: [String: JSONValue], on c: PostgresConnection) async throws {
        let props = String(decoding: try JSONCoding.encode(JSONValue.object(properties)), as: UTF8.self)
        let p = pseudonym(uid)
        try await c.query("""
            INSERT INTO analytics_events (name, pseudonym, occurred_at, day, properties)
            SELECT \(name.rawValue), \(p), \(at), (\(at)::timestamptz AT TIME ZONE 'UTC')::date, \(props)::jsonb
            WHERE EXISTS (SELECT 1 FROM analytics_consent WHERE pseudonym = \(p))
            """, logger: logger).drain()
    }

    /// Whether `uid` agreed to analytics (US-13.1): nothing is derived from a user who did not.
    func consents(_ uid: String, on c: PostgresConnection) async throws -> Bool {
        try await c.query("SELECT 1 FROM analytics_consent WHERE pseudonym = \(pseudonym(uid))", logger: logger).first(Int32.self) != nil
    }

    /// Records `uid`'s answer: agreeing starts the collection; withdrawing ends it and erases
    /// what was collected under their pseudonym.
    func setConsent(_ uid: String, _ consent: Bool, on c: PostgresConnection) async throws {
        if consent {
            try await c.query("INSERT INTO analytics_consent (pseudonym) VALUES (\(pseudonym(uid))) ON CONFLICT DO NOTHING", logger: logger).drain()
        } else {
            try await forget(uid, on: c)
        }
    }

    /// Records a fire per alarm in one statement, with each alarm's interval type.
    func recordFires(_ fires: [(alarmId: String, ownerId: String, at: Date, snoozeCount: Int)], on c: PostgresConnection) async throws {
        guard !fires.isEmpty else { return }
        try await c.prepared("""
            INSERT INTO analytics_events (name, pseudonym, occurred_at, day, properties)
            SELECT 'alarm_fired', f.p, f.at, (f.at AT TIME ZONE 'UTC')::date,
                   jsonb_build_object('intervalType', a.schedule_type, 'snoozeCount', f.n)
            FROM unnest(\(fires.map(\.alarmId))::text[], \(fires.map { pseudonym($0.ownerId) })::text[],
                        \(fires.map(\.at))::timestamptz[], \(fires.map { $0.snoozeCount })::int[]) AS f(id, p, at, n)
            LEFT JOIN alarms a ON a.id = f.id
            WHERE EXISTS (SELECT 1 FROM analytics_consent k WHERE k.pseudonym = f.p)
            """, logger: logger).drain()
    }

    /// A user seen on the accounts stream with their consent: the first such sighting is the
    /// signup day.
    func upsertUser(_ uid: String, tier: Tier, at: Date, on c: PostgresConnection) async throws {
        try await c.query("""
            INSERT INTO analytics_users (pseudonym, signup_day, tier)
            SELECT \(pseudonym(uid)), (\(at)::timestamptz AT TIME ZONE 'UTC')::date, \(tier.rawValue)
            WHERE EXISTS (SELECT 1 FROM analytics_consent WHERE pseudonym = \(pseudonym(uid)))
            ON CONFLICT (pseudonym) DO NOTHING
            """, logger: logger).drain()
        try await reached(uid, tier: tier, at: at, on: c)
    }

    /// Notes that `uid` holds `tier` from `at` (the first time they reached Plus or Premium stays).
    func reached(_ uid: String, tier: Tier, at: Date, on c: PostgresConnection) async throws {
        try await c.query("""
            UPDATE analytics_users SET tier = \(tier.rawValue),
                reached_plus_at = CASE WHEN \(tier >= .plus) THEN coalesce(reached_plus_at, \(at)) ELSE reached_plus_at END,
                reached_premium_at = CASE WHEN \(tier >= .premium) THEN coalesce(reached_premium_at, \(at)) ELSE reached_premium_at END
            WHERE pseudonym = \(pseudonym(uid))
            """, logger: logger).drain()
    }

    /// Removes everything analytics holds of `uid` (account deletion).
    func forget(_ uid: String, on c: PostgresConnection) async throws {
        let p = pseudonym(uid)
        try await c.query("DELETE FROM analytics_events WHERE pseudonym = \(p)", logger: logger).drain()
        try await c.query("DELETE FROM analytics_users WHERE pseudonym = \(p)", logger: logger).drain()
        try await c.query("DELETE FROM analytics_consent WHERE pseudonym = \(p)", logger: logger).drain()
    }
}
