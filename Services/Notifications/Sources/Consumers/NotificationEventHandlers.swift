import NotificationsCore
import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Tracing

/// What notifications takes from the scheduler, alarms, invitations and accounts streams. Each event becomes, in
/// the consumer's transaction, one inbox row per recipient and one delivery row per device of
/// each recipient — both unique per event, so a redelivered event adds nothing.
struct NotificationEventHandlers: Sendable {
    let outbox: OutboxWriter
    let worker: DeliveryWorker
    let store: NotificationStore
    /// This host's wall clock: it orders a run (urgent first) and arms wakes, and decides nothing.
    var hostClock: @Sendable () -> Date = { Date() }

    var scheduler: EventHandlers {
        var h = EventHandlers(SchedulerEvents.self)
        // A burst of fires arrives as runs of these events: stored a run at a time.
        h.onBatch([SchedulerEvents.alarmFired, SchedulerEvents.preAlarmDue, SchedulerEvents.occurrenceMissed, SchedulerEvents.completionPush]) { run, c in
            // Each event decoded once; group alarms' texts name the group and its members: one
            // read for the run's groups (none when the run has no group alarm).
            let events = try run.map { try SchedulerNotice($0.envelope) }
            let groups = try await store.groupTexts(Set(events.compactMap(\.groupId)), on: c, logger: run[0].logger)
            var items: [(RenderedNotification, EventContext)] = []
            for (event, ctx) in zip(events, run) {
                for n in event.render(groups: groups) { items.append((n, ctx)) }
            }
            try await storeBatch(DeliveryOrder.urgentFirst(items, now: hostClock()), c)
        }
        h.on(SchedulerEvents.fireWithdrawn) { e, ctx, c in
            try await withdraw(e, ctx, c)
        }
        return h
    }

    /// A scheduler event that becomes notifications, decoded.
    enum SchedulerNotice {
        case fired(SchedulerEvents.AlarmFired)
        case preAlarm(SchedulerEvents.PreAlarmDue)
        case missed(SchedulerEvents.OccurrenceMissed)
        case completed(SchedulerEvents.CompletionPush)

        init(_ e: Envelope) throws {
            switch e.type {
            case SchedulerEvents.alarmFired: self = .fired(try e.decodePayload(SchedulerEvents.AlarmFired.self))
            case SchedulerEvents.preAlarmDue: self = .preAlarm(try e.decodePayload(SchedulerEvents.PreAlarmDue.self))
            case SchedulerEvents.occurrenceMissed: self = .missed(try e.decodePayload(SchedulerEvents.OccurrenceMissed.self))
            default: self = .completed(try e.decodePayload(SchedulerEvents.CompletionPush.self))
            }
        }

        /// The group whose texts the notifications name, if any.
        var groupId: String? {
            switch self {
            case .fired(let e): e.groupId
            case .completed(let e): e.groupId
            case .preAlarm, .missed: nil
            }
        }

        /// The notifications of the event; `groups`: what texts say of the groups involved.
        func render(groups: [String: NotificationRenderer.GroupText]) -> [RenderedNotification] {
            switch self {
            case .fired(let e): NotificationRenderer.fired(e, group: e.groupId.flatMap { groups[$0] })
            case .preAlarm(let e): [NotificationRenderer.preAlarm(e)]
            case .missed(let e): [NotificationRenderer.missed(e)]
            case .completed(let e): NotificationRenderer.completed(e, group: e.groupId.flatMap { groups[$0] })
            }
        }
    }

    var alarms: EventHandlers {
        var h = EventHandlers(AlarmsEvents.self)
        // A completion has its own push (the scheduler's `completion-push`), a miss its `alarm_missed`.
        h.ignore(AlarmsEvents.alarmCompleted, AlarmsEvents.alarmMissed)
        h.onBatch([AlarmsEvents.alarmUpserted, AlarmsEvents.alarmDeleted, AlarmsEvents.alarmSnoozed, AlarmsEvents.alarmSkipped]) { run, c in
            var items: [(RenderedNotification, EventContext)] = []
            for ctx in run {
                guard let (alarm, change) = try Self.changedAlarm(ctx.envelope) else { continue }
                for n in NotificationRenderer.alarmChanged(alarm, change: change) { items.append((n, ctx)) }
            }
            try await storeBatch(items, c)
        }
        return h
    }

    /// The alarm an alarms event names members to tell about, and what happened to it; nil when
    /// it names no one (most events: an alarm of one person changed by them). Only that much
    /// is decoded, after a scan for `syncMembers`.
    static func changedAlarm(_ e: Envelope) throws -> (NotificationRenderer.ChangedAlarm, String)? {
        let json: Data?
        let change: String
        switch e.type {
        case AlarmsEvents.alarmUpserted.type: (json, change) = (e.payload, "updated")
        case AlarmsEvents.alarmDeleted.type: (json, change) = (e.payload, "deleted")
        case AlarmsEvents.alarmSnoozed.type: (json, change) = (try JSONMember.raw("alarm", in: e.payload), "snoozed")
        default: (json, change) = (try JSONMember.raw("alarm", in: e.payload), "skipped")
        }
        guard let json, try JSONMember.raw("syncMembers", in: json) != nil else { return nil }
        return (try JSONCoding.decode(NotificationRenderer.ChangedAlarm.self, from: json), change)
    }

    var invitations: EventHandlers {
        var h = EventHandlers(InvitationsEvents.self)
        h.ignore(InvitationsEvents.declined, InvitationsEvents.revoked, InvitationsEvents.expired)
        h.on(InvitationsEvents.created) { e, ctx, c in
            if let n = NotificationRenderer.invitationReceived(e) { try await storeNotification(n, ctx, c) }
        }
        h.on(InvitationsEvents.accepted) { e, ctx, c in
            try await storeNotification(NotificationRenderer.invitationAccepted(e), ctx, c)
        }
        return h
    }

    var accounts: EventHandlers {
        var h = EventHandlers(AccountsEvents.self)
        h.ignore(AccountsEvents.sessionRevoked)
        // A profile event that changed the plan is told to the user (`plan_changed`); the first
        // one seen of a user only records it (nothing to compare with).
        h.on(AccountsEvents.userUpserted) { e, ctx, c in
            guard let before = try await store.noteTier(e.tier.rawValue, of: e.uid, on: c, logger: ctx.logger),
                  before != e.tier.rawValue else { return }
            try await storeNotification(NotificationRenderer.planChanged(user: e.uid, tier: e.tier), ctx, c)
        }
        h.on(AccountsEvents.groupUpserted) { e, ctx, c in
            try await store.upsertGroup(e, on: c, logger: ctx.logger)
        }
        h.on(AccountsEvents.groupDeleted) { e, ctx, c in
            try await store.deleteGroup(e.groupId, on: c, logger: ctx.logger)
        }
        h.on(AccountsEvents.deviceUpserted) { e, ctx, c in
            let d = e.device
            try await store.upsertDevice(user: e.uid, d, provider: Self.provider(of: d), on: c, logger: ctx.logger)
        }
        h.on(AccountsEvents.deviceRemoved) { e, ctx, c in
            try await store.deleteDevice(user: e.uid, device: e.deviceId, on: c, logger: ctx.logger)
            try await store.dropPendingDeliveries(user: e.uid, device: e.deviceId, on: c, logger: ctx.logger)
        }
        h.on(AccountsEvents.userDeleted) { e, ctx, c in
            try await store.deleteDevices(of: e.uid, on: c, logger: ctx.logger)
            try await store.deleteTier(of: e.uid, on: c, logger: ctx.logger)
            try await store.forgetGroupMember(e.uid, on: c, logger: ctx.logger)
            try await store.deleteInbox(of: e.uid, on: c, logger: ctx.logger)
            try await store.deleteAttempts(of: e.uid, on: c, logger: ctx.logger)
            try await store.deleteDeliveries(of: e.uid, on: c, logger: ctx.logger)
            // Other members' completion notifications name who completed: the uid goes.
            try await store.eraseCompletedByInInbox(e.uid, on: c, logger: ctx.logger)
            try await store.eraseCompletedByInDeliveries(e.uid, on: c, logger: ctx.logger)
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
        var datas: [String] = [], contents: [String] = [], ats: [Date] = [], rowData: [[String: String]] = []
        for (n, ctx) in items {
            let data = String(decoding: try JSONCoding.encode(n.content.data), as: UTF8.self)
            let content = String(decoding: try JSONCoding.encode(n.content), as: UTF8.self)
            for user in Set(n.recipients).sorted() {
                users.append(user); events.append(ctx.envelope.id); types.append(n.content.type); titles.append(n.content.title)
                bodies.append(n.content.body); datas.append(data); contents.append(content); rowData.append(n.content.data)
                ats.append(n.deliverAt ?? Date(timeIntervalSince1970: 0))
            }
        }
        guard !users.isEmpty else { return }
        let logger = items[0].1.logger
        let rows = try await store.insertInboxBatch(users: users, events: events, types: types, titles: titles, bodies: bodies, datas: datas,
                                                    ats: ats, on: c, logger: logger)
        // Which input row each inserted row came from (event id + user is unique).
        var index: [String: Int] = [:]
        for i in users.indices { index["\(events[i])|\(users[i])"] = i }
        // An event may render differently for different recipients (a change: members and former members).
        var traceByEvent: [String: ServiceContext] = [:]
        for (_, ctx) in items { traceByEvent[ctx.envelope.id] = ctx.traceContext }
        var inserted: [(id: Int64, row: Int, created: Date)] = []
        for (id, user, event, created) in rows {
            if let i = index["\(event)|\(user)"] { inserted.append((id, i, created)) }
        }
        // In the order of their ids, so the live stream sees them in the order of their cursors.
        inserted.sort { $0.id < $1.id }
        var envelopes: [Envelope] = []
        var ids: [Int64] = [], dUsers: [String] = [], dEvents: [String] = [], dContents: [String] = [], dAts: [Date] = []
        for (id, i, created) in inserted {
            let item = InboxNotification(id: id, userId: users[i], type: types[i], title: titles[i], body: bodies[i],
                                         data: rowData[i], eventId: events[i], createdAt: created, ackedAt: nil)
            envelopes.append(try outbox.envelope(NotificationsEvents.notificationCreated, NotificationsEvents.NotificationCreated(notification: item),
                                                 actor: users[i], context: traceByEvent[events[i]] ?? .topLevel))
            ids.append(id); dUsers.append(users[i]); dEvents.append(events[i]); dContents.append(contents[i]); dAts.append(created)
        }
        try await outbox.append(envelopes, on: c)
        guard !ids.isEmpty else { return }
        let queued = try await store.queueDeliveryBatch(inboxIds: ids, users: dUsers, events: dEvents, contents: dContents, ats: dAts,
                                                        on: c, logger: logger)
        if queued > 0 {
            worker.wake()
            // Pushes announced ahead go at their instant, not at the next poll after it: armed
            // once the transaction has committed (a claim before it would not see the rows).
            let now = hostClock()
            let ahead = Array(Set(dAts.filter { $0 > now }))
            if !ahead.isEmpty {
                if let hooks = CommitHooks.current { hooks.afterCommit { worker.wake(at: ahead) } } else { worker.wake(at: ahead) }
            }
        }
    }

    /// A fire withdrawn before its instant: the inbox rows still waiting for it go, with their
    /// queued pushes; live followers are told. Rows already shown (their instant passed while
    /// the withdrawal travelled) stay: the user has seen them.
    func withdraw(_ e: SchedulerEvents.FireWithdrawn, _ ctx: EventContext, _ c: PostgresConnection) async throws {
        let rows = try await store.withdrawWaiting(event: e.eventId, on: c, logger: ctx.logger)
        var byUser: [String: [Int64]] = [:]
        for (id, user) in rows { byUser[user, default: []].append(id) }
        var envelopes: [Envelope] = []
        for (user, ids) in byUser.sorted(by: { $0.key < $1.key }) {
            envelopes.append(try outbox.envelope(NotificationsEvents.notificationWithdrawn,
                                                 NotificationsEvents.NotificationWithdrawn(userId: user, ids: ids), actor: user))
        }
        try await outbox.append(envelopes, on: c)
        ctx.logger.info("notifications withdrawn with their fire", metadata: ["event": "\(e.eventId)", "rows": "\(byUser.values.map(\.count).reduce(0, +))"])
    }

    /// Stores the notification for every recipient and queues one delivery per device.
    func storeNotification(_ n: RenderedNotification, _ ctx: EventContext, _ c: PostgresConnection) async throws {
        let eventId = ctx.envelope.id
        let data = String(decoding: try JSONCoding.encode(n.content.data), as: UTF8.self)
        let content = String(decoding: try JSONCoding.encode(n.content), as: UTF8.self)
        var queued = false
        let users = Set(n.recipients).sorted()
        try await store.lockInboxes(of: users, on: c, logger: ctx.logger)
        for user in users {
            guard let (id, created) = try await store.insertInbox(user: user, event: eventId, type: n.content.type, title: n.content.title,
                                                                 body: n.content.body, data: data, on: c, logger: ctx.logger) else { continue }
            let item = InboxNotification(id: id, userId: user, type: n.content.type, title: n.content.title, body: n.content.body,
                                         data: n.content.data, eventId: eventId, createdAt: created, ackedAt: nil)
            _ = try await outbox.append(NotificationsEvents.notificationCreated, NotificationsEvents.NotificationCreated(notification: item),
                                    actor: user, on: c)
            let inserted = try await store.queueDeliveries(event: eventId, inbox: id, user: user, content: content, on: c, logger: ctx.logger)
            queued = queued || inserted > 0
        }
        if queued { worker.wake() }
    }
}
