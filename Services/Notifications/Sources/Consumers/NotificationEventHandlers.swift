import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO
import Tracing

/// What notifications takes from the scheduler and accounts streams. Each event becomes, in
/// the consumer's transaction, one inbox row per recipient and one delivery row per device of
/// each recipient — both unique per event, so a redelivered event adds nothing.
struct NotificationEventHandlers: Sendable {
    let outbox: OutboxWriter
    let worker: DeliveryWorker

    var scheduler: EventHandlers {
        var h = EventHandlers(SchedulerEvents.self)
        // A burst of fires arrives as runs of these events: stored a run at a time.
        h.onBatch([SchedulerEvents.alarmFired, SchedulerEvents.preAlarmDue, SchedulerEvents.occurrenceMissed, SchedulerEvents.completionPush]) { run, c in
            try await storeBatch(try run.map { ctx in (try Self.render(ctx.envelope), ctx) }, c)
        }
        h.on(SchedulerEvents.fireWithdrawn) { e, ctx, c in
            try await withdraw(e, ctx, c)
        }
        return h
    }

    /// The notification of a scheduler event.
    static func render(_ e: Envelope) throws -> RenderedNotification {
        switch e.type {
        case SchedulerEvents.alarmFired: NotificationRenderer.fired(try e.decodePayload(SchedulerEvents.AlarmFired.self))
        case SchedulerEvents.preAlarmDue: NotificationRenderer.preAlarm(try e.decodePayload(SchedulerEvents.PreAlarmDue.self))
        case SchedulerEvents.occurrenceMissed: NotificationRenderer.missed(try e.decodePayload(SchedulerEvents.OccurrenceMissed.self))
        default: NotificationRenderer.completed(try e.decodePayload(SchedulerEvents.CompletionPush.self))
        }
    }

    var invitations: EventHandlers {
        var h = EventHandlers(InvitationsEvents.self)
        h.ignore(InvitationsEvents.declined, InvitationsEvents.revoked, InvitationsEvents.expired)
        h.on(InvitationsEvents.created) { e, ctx, c in
            if let n = NotificationRenderer.invitationReceived(e) { try await store(n, ctx, c) }
        }
        h.on(InvitationsEvents.accepted) { e, ctx, c in
            try await store(NotificationRenderer.invitationAccepted(e), ctx, c)
        }
        return h
    }

    var accounts: EventHandlers {
        var h = EventHandlers(AccountsEvents.self)
        h.ignore(AccountsEvents.userUpserted, AccountsEvents.sessionRevoked, AccountsEvents.groupUpserted, AccountsEvents.groupDeleted)
        h.on(AccountsEvents.deviceUpserted) { e, ctx, c in
            let d = e.device
            try await c.query("""
                INSERT INTO devices (user_id, device_id, platform, provider, token, webhook_url, updated_at)
                VALUES (\(e.uid), \(d.deviceId), \(d.platform), \(Self.provider(of: d)), \(d.pushToken), \(d.webhookUrl), \(d.updatedAt))
                ON CONFLICT (user_id, device_id) DO UPDATE SET platform = excluded.platform, provider = excluded.provider,
                    token = excluded.token, webhook_url = excluded.webhook_url, updated_at = excluded.updated_at
                """, logger: ctx.logger)
        }
        h.on(AccountsEvents.deviceRemoved) { e, ctx, c in
            try await c.query("DELETE FROM devices WHERE user_id = \(e.uid) AND device_id = \(e.deviceId)", logger: ctx.logger)
            try await c.query("""
                UPDATE deliveries SET state = 'dropped', last_error = 'device removed', finished_at = now()
                WHERE user_id = \(e.uid) AND device_id = \(e.deviceId) AND state = 'pending'
                """, logger: ctx.logger)
        }
        h.on(AccountsEvents.userDeleted) { e, ctx, c in
            try await c.query("DELETE FROM devices WHERE user_id = \(e.uid)", logger: ctx.logger)
            try await c.query("DELETE FROM inbox WHERE user_id = \(e.uid)", logger: ctx.logger)
            try await c.query("DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE user_id = \(e.uid))", logger: ctx.logger)
            try await c.query("DELETE FROM deliveries WHERE user_id = \(e.uid)", logger: ctx.logger)
            // Other members' completion notifications name who completed: the uid goes.
            try await c.query("UPDATE inbox SET data = data - 'completedBy' WHERE data->>'completedBy' = \(e.uid)", logger: ctx.logger)
            try await c.query("""
                UPDATE deliveries SET content = jsonb_set(content, '{data}', (content->'data') - 'completedBy')
                WHERE content->'data'->>'completedBy' = \(e.uid)
                """, logger: ctx.logger)
        }
        return h
    }

    /// `apns` for iOS, `fcm` for Android, `webhook` for the rest, unless the device names one
    /// (`Device.provider`, the rule accounts applies too).
    static func provider(of d: Device) -> String { d.provider.rawValue }

    /// Stores a run of notifications with three statements: inbox rows for every recipient,
    /// their `notification-created` events, and one delivery per device of each recipient.
    func storeBatch(_ items: [(RenderedNotification, EventContext)], _ c: PostgresConnection) async throws {
        var users: [String] = [], events: [String] = [], types: [String] = [], titles: [String] = [], bodies: [String] = []
        var datas: [String] = [], contents: [String] = [], ats: [Date] = []
        for (n, ctx) in items {
            let data = String(decoding: try JSONCoding.encode(n.content.data), as: UTF8.self)
            let content = String(decoding: try JSONCoding.encode(n.content), as: UTF8.self)
            for user in Set(n.recipients).sorted() {
                users.append(user); events.append(ctx.envelope.id); types.append(n.content.type); titles.append(n.content.title)
                bodies.append(n.content.body); datas.append(data); contents.append(content)
                ats.append(n.deliverAt ?? Date(timeIntervalSince1970: 0))
            }
        }
        guard !users.isEmpty else { return }
        let logger = items[0].1.logger
        let rows = try await c.query("""
            INSERT INTO inbox (user_id, event_id, type, title, body, data, created_at)
            SELECT u, e, t, ti, b, d::jsonb, greatest(now(), at) FROM unnest(\(users)::text[], \(events)::text[], \(types)::text[], \(titles)::text[],
                \(bodies)::text[], \(datas)::text[], \(ats)::timestamptz[]) WITH ORDINALITY AS x(u, e, t, ti, b, d, at, n)
            ORDER BY n
            ON CONFLICT (event_id, user_id) DO NOTHING
            RETURNING id, user_id, event_id, created_at
            """, logger: logger)
        // Which input row each inserted row came from (event id + user is unique).
        var index: [String: Int] = [:]
        for i in users.indices { index["\(events[i])|\(users[i])"] = i }
        var dataByEvent: [String: [String: String]] = [:]
        var traceByEvent: [String: ServiceContext] = [:]
        for (n, ctx) in items {
            dataByEvent[ctx.envelope.id] = n.content.data
            traceByEvent[ctx.envelope.id] = ctx.traceContext
        }
        var inserted: [(id: Int64, row: Int, created: Date)] = []
        for try await (id, user, event, created) in rows.decode((Int64, String, String, Date).self) {
            if let i = index["\(event)|\(user)"] { inserted.append((id, i, created)) }
        }
        // In the order of their ids, so the live stream sees them in the order of their cursors.
        inserted.sort { $0.id < $1.id }
        var envelopes: [Envelope] = []
        var ids: [Int64] = [], dUsers: [String] = [], dEvents: [String] = [], dContents: [String] = [], dAts: [Date] = []
        for (id, i, created) in inserted {
            let item = InboxNotification(id: id, userId: users[i], type: types[i], title: titles[i], body: bodies[i],
                                         data: dataByEvent[events[i]] ?? [:], eventId: events[i], createdAt: created, ackedAt: nil)
            envelopes.append(try outbox.envelope(NotificationsEvents.notificationCreated, NotificationsEvents.NotificationCreated(notification: item),
                                                 actor: users[i], context: traceByEvent[events[i]] ?? .topLevel))
            ids.append(id); dUsers.append(users[i]); dEvents.append(events[i]); dContents.append(contents[i]); dAts.append(created)
        }
        try await outbox.append(envelopes, on: c)
        guard !ids.isEmpty else { return }
        let queued = try await c.query("""
            INSERT INTO deliveries (event_id, inbox_id, user_id, device_id, provider, token, webhook_url, content, next_attempt_at)
            SELECT x.e, x.i, d.user_id, d.device_id, d.provider, d.token, d.webhook_url, x.c::jsonb, x.at
            FROM unnest(\(ids)::bigint[], \(dUsers)::text[], \(dEvents)::text[], \(dContents)::text[], \(dAts)::timestamptz[]) AS x(i, u, e, c, at)
            JOIN devices d ON d.user_id = x.u AND (d.token IS NOT NULL OR d.webhook_url IS NOT NULL)
            ON CONFLICT (event_id, device_id) DO NOTHING
            RETURNING 1
            """, logger: logger).all(Int32.self)
        if !queued.isEmpty { worker.wake() }
    }

    /// A fire withdrawn before its instant: the inbox rows still waiting for it go, with their
    /// queued pushes; live followers are told. Rows already shown (their instant passed while
    /// the withdrawal travelled) stay: the user has seen them.
    func withdraw(_ e: SchedulerEvents.FireWithdrawn, _ ctx: EventContext, _ c: PostgresConnection) async throws {
        let rows = try await c.query("""
            WITH gone AS (DELETE FROM inbox WHERE event_id = \(e.eventId) AND created_at > now() RETURNING id, user_id),
            dropped AS (
                UPDATE deliveries d SET state = 'dropped', last_error = 'fire withdrawn', finished_at = now()
                FROM gone WHERE d.inbox_id = gone.id AND d.state = 'pending'
            )
            SELECT id, user_id FROM gone ORDER BY user_id, id
            """, logger: ctx.logger)
        var byUser: [String: [Int64]] = [:]
        for try await (id, user) in rows.decode((Int64, String).self) { byUser[user, default: []].append(id) }
        var envelopes: [Envelope] = []
        for (user, ids) in byUser.sorted(by: { $0.key < $1.key }) {
            envelopes.append(try outbox.envelope(NotificationsEvents.notificationWithdrawn,
                                                 NotificationsEvents.NotificationWithdrawn(userId: user, ids: ids), actor: user))
        }
        try await outbox.append(envelopes, on: c)
        ctx.logger.info("notifications withdrawn with their fire", metadata: ["event": "\(e.eventId)", "rows": "\(byUser.values.map(\.count).reduce(0, +))"])
    }

    /// Stores the notification for every recipient and queues one delivery per device.
    func store(_ n: RenderedNotification, _ ctx: EventContext, _ c: PostgresConnection) async throws {
        let eventId = ctx.envelope.id
        let data = String(decoding: try JSONCoding.encode(n.content.data), as: UTF8.self)
        let content = String(decoding: try JSONCoding.encode(n.content), as: UTF8.self)
        var queued = false
        for user in Set(n.recipients).sorted() {
            let rows = try await c.query("""
                INSERT INTO inbox (user_id, event_id, type, title, body, data)
                VALUES (\(user), \(eventId), \(n.content.type), \(n.content.title), \(n.content.body), \(data)::jsonb)
                ON CONFLICT (event_id, user_id) DO NOTHING
                RETURNING id, created_at
                """, logger: ctx.logger)
            guard let (id, created) = try await rows.decode((Int64, Date).self).first(where: { _ in true }) else { continue }
            let item = InboxNotification(id: id, userId: user, type: n.content.type, title: n.content.title, body: n.content.body,
                                         data: n.content.data, eventId: eventId, createdAt: created, ackedAt: nil)
            _ = try await outbox.append(NotificationsEvents.notificationCreated, NotificationsEvents.NotificationCreated(notification: item),
                                    actor: user, on: c)
            let inserted = try await c.query("""
                INSERT INTO deliveries (event_id, inbox_id, user_id, device_id, provider, token, webhook_url, content)
                SELECT \(eventId), \(id), user_id, device_id, provider, token, webhook_url, \(content)::jsonb FROM devices
                WHERE user_id = \(user) AND (token IS NOT NULL OR webhook_url IS NOT NULL)
                ON CONFLICT (event_id, device_id) DO NOTHING
                RETURNING id
                """, logger: ctx.logger).all(Int64.self)
            queued = queued || !inserted.isEmpty
        }
        if queued { worker.wake() }
    }
}
