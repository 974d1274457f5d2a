import Contracts
import Crypto
import Foundation
import Messaging
import PostgresNIO

/// Subscribable calendar feeds: a secret token (128 bits) in the URL is the credential, so a
/// calendar app can poll it without a bearer token. Only the token's SHA-256 is stored; a
/// deleted feed's URL answers 404 at once.
struct CalendarFeedHandlers: Sendable {
    let store: AlarmStore
    /// The most feeds one account keeps.
    static let maxFeeds = 20

    func register(into router: inout RPCRouter) {
        router.on(CalendarFeedMethods.Create.self) { req, ctx in try await create(req, actor: try ctx.requireActor()) }
        router.on(CalendarFeedMethods.List.self) { _, ctx in try await list(actor: try ctx.requireActor()) }
        router.on(CalendarFeedMethods.Delete.self) { req, ctx in try await delete(req.id, actor: try ctx.requireActor()) }
        router.on(CalendarFeedMethods.Fetch.self) { req, _ in try await fetch(req.token) }
    }

    static func hash(_ token: String) -> String { SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined() }

    func create(_ req: CalendarFeedCreate, actor: String) async throws -> CalendarFeed {
        guard req.scope == "me" || req.scope == "group" else { throw ServiceError(.validationFailed, "scope must be me or group") }
        if req.scope == "me", req.groupId != nil { throw ServiceError(.validationFailed, "groupId goes with scope group only") }
        let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let id = UUIDv7.string()
        return try await store.database.transaction { c in
            if req.scope == "group" {
                guard let group = req.groupId, try await store.groupRole(group: group, user: actor, on: c) != nil else {
                    throw ServiceError(.notFound, "no group \(req.groupId ?? "(groupId missing)") of yours")
                }
            }
            let count = try await c.query("SELECT count(*)::int FROM calendar_feeds WHERE user_id = \(actor)", logger: store.logger).first(Int.self) ?? 0
            guard count < Self.maxFeeds else {
                throw ServiceError(.validationFailed, "an account keeps at most \(Self.maxFeeds) calendar feeds; delete one first")
            }
            let createdAt = try await c.query("""
                INSERT INTO calendar_feeds (id, token_hash, user_id, scope, group_id) VALUES (\(id), \(Self.hash(token)), \(actor), \(req.scope), \(req.groupId))
                RETURNING created_at
                """, logger: store.logger).first(Date.self) ?? Date()
            return CalendarFeed(id: id, scope: req.scope, groupId: req.groupId, createdAt: createdAt, lastFetchedAt: nil, token: token)
        }
    }

    func list(actor: String) async throws -> CalendarFeedList {
        let rows = try await store.database.query("""
            SELECT id, scope, group_id, created_at, last_fetched_at FROM calendar_feeds WHERE user_id = \(actor) ORDER BY created_at, id
            """)
        var feeds: [CalendarFeed] = []
        for try await (id, scope, group, created, fetched) in rows.decode((String, String, String?, Date, Date?).self) {
            feeds.append(CalendarFeed(id: id, scope: scope, groupId: group, createdAt: created, lastFetchedAt: fetched))
        }
        return CalendarFeedList(feeds: feeds)
    }

    func delete(_ id: String, actor: String) async throws -> Empty {
        let rows = try await store.database.query("DELETE FROM calendar_feeds WHERE id = \(id) AND user_id = \(actor) RETURNING id")
        guard try await rows.first(String.self) != nil else { throw ServiceError(.notFound, "no calendar feed \(id)") }
        return Empty()
    }

    /// The feed's calendar: its owner's alarms (scope `me`) or its group's (while the owner is
    /// still a member), with pre-alarm warnings and who each is assigned to.
    func fetch(_ token: String) async throws -> CalendarFeedDocument {
        let notFound = ServiceError(.notFound, "no such calendar feed")
        guard token.count == 32, token.allSatisfy(\.isHexDigit) else { throw notFound }
        return try await store.database.transaction { c in
            let feed = try await c.query("""
                UPDATE calendar_feeds SET last_fetched_at = now() WHERE token_hash = \(Self.hash(token)) RETURNING user_id, scope, group_id
                """, logger: store.logger).decode((String, String, String?).self)
            var found: (String, String, String?)?
            for try await f in feed { found = f }
            guard let (user, scope, group) = found else { throw notFound }
            let query: PostgresQuery
            if scope == "group", let group {
                guard try await store.groupRole(group: group, user: user, on: c) != nil else { throw notFound }
                query = """
                    SELECT \(unescaped: AlarmRow.columns) FROM alarms WHERE deleted_at IS NULL AND is_active AND group_id = \(group)
                    ORDER BY next_fire_date NULLS LAST, id LIMIT 5000
                    """
            } else {
                query = """
                    SELECT \(unescaped: AlarmRow.columns) FROM alarms
                    WHERE deleted_at IS NULL AND is_active AND (owner_id = \(user) OR \(user) = ANY(shared_with))
                    ORDER BY next_fire_date NULLS LAST, id LIMIT 5000
                    """
            }
            let alarms = try await AlarmRow.decodeAll(c.query(query, logger: store.logger))
            let people = Array(Set(alarms.flatMap { [$0.ownerId] + ($0.assignedTo.map { [$0] } ?? []) }))
            var names: [String: String] = [:]
            var tiers: [String: Tier] = [:]
            for try await (uid, name) in try await c.query("SELECT user_id, display_name FROM users WHERE user_id = ANY(\(people)::text[])",
                                                            logger: store.logger).decode((String, String).self) { names[uid] = name }
            for try await (uid, tier) in try await c.query("SELECT user_id, tier FROM user_tiers WHERE user_id = ANY(\(people)::text[])",
                                                            logger: store.logger).decode((String, String).self) { tiers[uid] = Tier(rawValue: tier) }
            // A day's "now": the document (and its tag) stays the same until something changes.
            let day = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
            let body = ExportHandlers.ics(alarms, now: day, feed: .init(
                warnings: { a in AlarmChanges.state(a, ownerTier: tiers[a.ownerId] ?? .free).preAlarmOffsetsMinutes },
                assignee: { a in a.assignedTo.map { names[$0] ?? $0 } }))
            return CalendarFeedDocument(body: body, etag: "\"" + String(Self.hash(body).prefix(32)) + "\"")
        }
    }
}
