import Contracts
import Crypto
import Foundation
import Messaging

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

    static func hash(_ token: String) -> String { Hex.lowercase(SHA256.hash(data: Data(token.utf8))) }

    func create(_ req: CalendarFeedCreate, actor: String) async throws -> CalendarFeed {
        guard req.scope == "me" || req.scope == "group" else { throw ServiceError(.validationFailed, "scope must be me or group") }
        if req.scope == "me", req.groupId != nil { throw ServiceError(.validationFailed, "groupId goes with scope group only") }
        let token = Hex.lowercase(Data.secureRandom(count: 16))
        let id = UUIDv7.string()
        return try await store.database.transaction { c in
            if req.scope == "group" {
                guard let group = req.groupId, try await store.groupRole(group: group, user: actor, on: c) != nil else {
                    throw ServiceError(.notFound, "no group \(req.groupId ?? "(groupId missing)") of yours")
                }
            }
            let count = try await store.calendarFeedCount(of: actor, on: c)
            guard count < Self.maxFeeds else {
                throw ServiceError(.validationFailed, "an account keeps at most \(Self.maxFeeds) calendar feeds; delete one first")
            }
            let createdAt = try await store.insertCalendarFeed(id: id, tokenHash: Self.hash(token), user: actor, scope: req.scope,
                                                               groupId: req.groupId, on: c)
            return CalendarFeed(id: id, scope: req.scope, groupId: req.groupId, createdAt: createdAt, lastFetchedAt: nil, token: token)
        }
    }

    func list(actor: String) async throws -> CalendarFeedList {
        CalendarFeedList(feeds: try await store.calendarFeeds(of: actor))
    }

    func delete(_ id: String, actor: String) async throws -> Empty {
        guard try await store.deleteCalendarFeed(id, of: actor) else { throw ServiceError(.notFound, "no calendar feed \(id)") }
        return Empty()
    }

    /// The feed's calendar: its owner's alarms (scope `me`) or its group's (while the owner is
    /// still a member), with pre-alarm warnings and who each is assigned to.
    func fetch(_ token: String) async throws -> CalendarFeedDocument {
        let notFound = ServiceError(.notFound, "no such calendar feed")
        guard token.count == 32, token.allSatisfy(\.isHexDigit) else { throw notFound }
        return try await store.database.transaction { c in
            guard let (user, scope, group) = try await store.touchCalendarFeed(tokenHash: Self.hash(token), on: c) else { throw notFound }
            let alarms: [Alarm]
            if scope == "group", let group {
                guard try await store.groupRole(group: group, user: user, on: c) != nil else { throw notFound }
                alarms = try await store.activeAlarms(inGroup: group, visibleTo: user, on: c)
            } else {
                alarms = try await store.activeAlarms(visibleTo: user, on: c)
            }
            let people = Array(Set(alarms.flatMap { [$0.ownerId] + ($0.assignedTo.map { [$0] } ?? []) }))
            let names = try await store.displayNames(of: people, on: c)
            let tiers = try await store.tiers(of: people, on: c)
            // A day's "now": the document (and its tag) stays the same until something changes.
            let day = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
            let body = ExportHandlers.ics(alarms, now: day, feed: .init(
                warnings: { a in AlarmChanges.state(a, ownerTier: tiers[a.ownerId] ?? .free).preAlarmOffsetsMinutes },
                assignee: { a in a.assignedTo.map { names[$0] ?? $0 } }))
            return CalendarFeedDocument(body: body, etag: "\"" + String(Self.hash(body).prefix(32)) + "\"")
        }
    }
}
