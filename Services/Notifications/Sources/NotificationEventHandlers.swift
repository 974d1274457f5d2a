import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What notifications takes from the scheduler and accounts streams. Each event becomes, in
/// the consumer's transaction, one inbox row per recipient and one delivery row per device of
/// each recipient — both unique per event, so a redelivered event adds nothing.
struct NotificationEventHandlers: Sendable {
    let outbox: OutboxWriter
    let worker: DeliveryWorker

    var scheduler: EventHandlers {
        var h = EventHandlers()
        h.on(SchedulerEvents.alarmFired, SchedulerEvents.AlarmFired.self) { e, ctx, c in
            try await store(NotificationRenderer.fired(e), ctx, c)
        }
        h.on(SchedulerEvents.preAlarmDue, SchedulerEvents.PreAlarmDue.self) { e, ctx, c in
            try await store(NotificationRenderer.preAlarm(e), ctx, c)
        }
        h.on(SchedulerEvents.occurrenceMissed, SchedulerEvents.OccurrenceMissed.self) { e, ctx, c in
            try await store(NotificationRenderer.missed(e), ctx, c)
        }
        h.on(SchedulerEvents.completionPush, SchedulerEvents.CompletionPush.self) { e, ctx, c in
            try await store(NotificationRenderer.completed(e), ctx, c)
        }
        return h
    }

    var invitations: EventHandlers {
        var h = EventHandlers()
        h.on(InvitationsEvents.created, InvitationsEvents.Changed.self) { e, ctx, c in
            if let n = NotificationRenderer.invitationReceived(e) { try await store(n, ctx, c) }
        }
        h.on(InvitationsEvents.accepted, InvitationsEvents.Changed.self) { e, ctx, c in
            try await store(NotificationRenderer.invitationAccepted(e), ctx, c)
        }
        return h
    }

    var accounts: EventHandlers {
        var h = EventHandlers()
        h.on(AccountsEvents.deviceUpserted, AccountsEvents.DeviceUpserted.self) { e, ctx, c in
            let d = e.device
            try await c.query("""
                INSERT INTO devices (user_id, device_id, platform, provider, token, webhook_url, updated_at)
                VALUES (\(e.uid), \(d.deviceId), \(d.platform), \(Self.provider(of: d)), \(d.pushToken), \(d.webhookUrl), \(d.updatedAt))
                ON CONFLICT (user_id, device_id) DO UPDATE SET platform = excluded.platform, provider = excluded.provider,
                    token = excluded.token, webhook_url = excluded.webhook_url, updated_at = excluded.updated_at
                """, logger: ctx.logger)
        }
        h.on(AccountsEvents.deviceRemoved, AccountsEvents.DeviceRemoved.self) { e, ctx, c in
            try await c.query("DELETE FROM devices WHERE user_id = \(e.uid) AND device_id = \(e.deviceId)", logger: ctx.logger)
            try await c.query("""
                UPDATE deliveries SET state = 'dropped', last_error = 'device removed', finished_at = now()
                WHERE user_id = \(e.uid) AND device_id = \(e.deviceId) AND state = 'pending'
                """, logger: ctx.logger)
        }
        h.on(AccountsEvents.userDeleted, AccountsEvents.UserDeleted.self) { e, ctx, c in
            try await c.query("DELETE FROM devices WHERE user_id = \(e.uid)", logger: ctx.logger)
            try await c.query("DELETE FROM inbox WHERE user_id = \(e.uid)", logger: ctx.logger)
            try await c.query("DELETE FROM deliveries WHERE user_id = \(e.uid)", logger: ctx.logger)
        }
        return h
    }

    /// `apns` for iOS, `fcm` for Android, `webhook` for the rest, unless the device names one.
    static func provider(of d: Device) -> String {
        if let p = d.pushProvider, ["apns", "fcm", "webhook"].contains(p) { return p }
        switch d.platform {
        case "ios": return "apns"
        case "android": return "fcm"
        default: return "webhook"
        }
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
