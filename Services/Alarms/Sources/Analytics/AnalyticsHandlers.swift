import AlarmsCore
import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// Product analytics (US-13.1), kept by the alarms service because every stream it needs
/// already reaches it: its own (created, deleted, completed, snoozed), the scheduler's fires,
/// invitations (shares), billing (upgrades) and accounts (signups, deletions). Each event is
/// recorded in the transaction that applies it, so replays and crashes count it once. Clients
/// add what the server cannot see through ``record(_:actor:)``.
struct AnalyticsHandlers: Sendable {
    let store: AnalyticsStore
    let reports: AnalyticsReports

    /// Properties a client may send, per event; values are numbers, booleans or strings of at
    /// most 40 characters (no free text, so nothing personal).
    static let clientProperties: [AnalyticsEventName: Set<String>] = [
        .alarmDismissed: ["timeToDismissSeconds", "intervalType", "snoozeCount"],
        .upgradePromptShown: ["trigger", "tier"],
        .onboardingCompleted: ["step", "presetsChosen"],
    ]

    func register(into router: inout RPCRouter) {
        router.on(AnalyticsMethods.Record.self) { req, ctx in try await record(req, actor: try ctx.requireActor()) }
        router.on(AnalyticsMethods.Report.self) { req, _ in
            guard (1...366).contains(req.days) else { throw ServiceError(.validationFailed, "days must be 1–366") }
            return try await reports.report(days: req.days)
        }
    }

    func record(_ batch: ClientAnalyticsBatch, actor: String) async throws -> ClientAnalyticsAccepted {
        guard batch.events.count <= 100 else { throw ServiceError(.validationFailed, "events: at most 100 per batch") }
        let now = Date()
        var checked: [(AnalyticsEventName, Date, [String: JSONValue])] = []
        for (k, event) in batch.events.enumerated() {
            guard let name = AnalyticsEventName(rawValue: event.name), AnalyticsEventName.fromClients.contains(name) else {
                throw ServiceError(.validationFailed, "events[\(k)].name must be one of "
                                   + AnalyticsEventName.fromClients.map(\.rawValue).sorted().joined(separator: ", "))
            }
            let at = event.occurredAt ?? now
            guard at <= now.addingTimeInterval(300), at >= now.addingTimeInterval(-30 * 86_400) else {
                throw ServiceError(.validationFailed, "events[\(k)].occurredAt must be within the last 30 days")
            }
            let allowed = Self.clientProperties[name] ?? []
            for (key, value) in event.properties ?? [:] {
                guard allowed.contains(key) else {
                    throw ServiceError(.validationFailed, "events[\(k)].properties.\(key) is not a property of \(name.rawValue) (\(allowed.sorted().joined(separator: ", ")))")
                }
                switch value {
                case .number, .bool: break
                case .string(let s) where s.count <= 40: break
                default: throw ServiceError(.validationFailed, "events[\(k)].properties.\(key) must be a number, a boolean or a string of at most 40 characters")
                }
            }
            checked.append((name, at, event.properties ?? [:]))
        }
        // Without the user's consent nothing is kept (US-13.1); the answer says so.
        let accepted = try await store.database.transaction { [checked] c in
            guard try await store.consents(actor, on: c) else { return 0 }
            for (name, at, properties) in checked { try await store.record(name, uid: actor, at: at, properties: properties, on: c) }
            return checked.count
        }
        return ClientAnalyticsAccepted(accepted: accepted)
    }

    /// The alarms stream (this service's own events), in runs: a run of creations, deletions,
    /// completions and snoozes is two statements (the tiers it needs, then every row), not two
    /// per event (per event it was most of this service's CPU after a burst of completions).
    var alarmsStream: EventHandlers {
        var h = EventHandlers(AlarmsEvents.self)
        h.ignore(AlarmsEvents.alarmSkipped, AlarmsEvents.alarmMissed)
        h.onBatch([AlarmsEvents.alarmUpserted, AlarmsEvents.alarmDeleted, AlarmsEvents.alarmCompleted, AlarmsEvents.alarmSnoozed]) { run, c in
            try await store.record(try run.compactMap(Self.row), on: c)
        }
        return h
    }

    /// What an event of this service's stream adds to analytics, if anything.
    static func row(_ ctx: EventContext) throws -> AnalyticsStore.Row? {
        let e = ctx.envelope
        switch e.type {
        case AlarmsEvents.alarmUpserted:
            let a = try e.decodePayload(AnalyticsViews.Upserted.self)
            guard a.version == 1 else { return nil }
            return .init(name: .alarmCreated, uid: a.ownerId, at: e.occurredAt, withTier: true,
                         properties: ["intervalType": .string(a.schedule.type), "shared": .bool(a.members.contains { $0 != a.ownerId })])
        case AlarmsEvents.alarmDeleted:
            // Only what a person did: an account purge deletes its alarms with no actor, after
            // analytics forgot the account.
            guard let actor = e.actor else { return nil }
            let a = try e.decodePayload(AnalyticsViews.AlarmKind.self)
            return .init(name: .alarmDeleted, uid: actor, at: e.occurredAt, withTier: false, properties: ["intervalType": .string(a.schedule.type)])
        case AlarmsEvents.alarmCompleted:
            // Version 2 names the owner and schedule type itself; version 1 (before the upgrade)
            // inside the whole alarm state.
            let m = e.version >= 2 ? try e.decodePayload(AnalyticsViews.Completed.self)
                                   : try e.decodePayload(AnalyticsViews.CompletedV1.self).completed
            return .init(name: .alarmCompleted, uid: m.userId ?? m.ownerId, at: m.completedAt, withTier: true,
                         properties: ["intervalType": .string(m.scheduleType),
                                      "lateSeconds": .number(max(0, m.completedAt.timeIntervalSince(m.scheduledDate)).rounded())])
        case AlarmsEvents.alarmSnoozed:
            let s = try e.decodePayload(AnalyticsViews.Snoozed.self)
            return .init(name: .alarmSnoozed, uid: s.userId, at: e.occurredAt, withTier: false,
                         properties: ["intervalType": .string(s.alarm.schedule.type), "snoozeCount": .number(Double(s.snoozeCount)),
                                      "minutes": .number((s.refireAt.timeIntervalSince(e.occurredAt) / 60).rounded())])
        default:
            return nil
        }
    }

    /// The scheduler stream: fires (batched, one statement a run).
    var schedulerStream: EventHandlers {
        var h = EventHandlers(SchedulerEvents.self)
        h.ignore(SchedulerEvents.preAlarmDue, SchedulerEvents.occurrenceMissed, SchedulerEvents.completionPush, SchedulerEvents.fireWithdrawn)
        h.onBatch([SchedulerEvents.alarmFired]) { run, c in
            let fires = try run.map { try $0.envelope.decodePayload(SchedulerEvents.AlarmFired.self) }
            try await store.recordFires(fires.map { (alarmId: $0.alarmId, ownerId: $0.ownerId, at: $0.dueAt, snoozeCount: $0.snoozeCount) }, on: c)
        }
        return h
    }

    /// The invitations stream: a share begins when an invitation is made.
    var invitationsStream: EventHandlers {
        var h = EventHandlers(InvitationsEvents.self)
        h.ignore(InvitationsEvents.accepted, InvitationsEvents.declined, InvitationsEvents.revoked, InvitationsEvents.expired)
        h.on(InvitationsEvents.created) { e, ctx, c in
            try await store.record(.shareInitiated, uid: e.invitation.inviterId, at: ctx.envelope.occurredAt,
                                   properties: ["type": .string(e.invitation.type), "byEmail": .bool(e.invitation.inviteeEmail != nil)], on: c)
        }
        return h
    }

    /// The billing stream: a higher tier is an upgrade.
    var billingStream: EventHandlers {
        var h = EventHandlers(BillingEvents.self)
        h.on(BillingEvents.entitlementChanged) { e, ctx, c in
            try await store.reached(e.userId, tier: e.tier, at: ctx.envelope.occurredAt, on: c)
            guard e.tier > e.previousTier else { return }
            try await store.record(.upgradeCompleted, uid: e.userId, at: ctx.envelope.occurredAt,
                                   properties: ["fromTier": .string(e.previousTier.rawValue), "toTier": .string(e.tier.rawValue),
                                                "reason": .string(e.reason)], on: c)
        }
        return h
    }

    /// The accounts stream: the first sighting of a user is their signup; a deletion forgets them.
    var accountsStream: EventHandlers {
        var h = EventHandlers(AccountsEvents.self)
        h.ignore(AccountsEvents.deviceUpserted, AccountsEvents.deviceRemoved, AccountsEvents.sessionRevoked, AccountsEvents.groupUpserted, AccountsEvents.groupDeleted)
        h.on(AccountsEvents.userUpserted) { u, ctx, c in
            // Absent (a peer from before 0.3): the consent recorded stays as it is.
            if let consent = u.analyticsConsent { try await store.setConsent(u.uid, consent, on: c) }
            try await store.upsertUser(u.uid, tier: u.tier, at: ctx.envelope.occurredAt, on: c)
        }
        h.on(AccountsEvents.userDeleted) { u, _, c in
            try await store.forget(u.uid, on: c)
        }
        return h
    }
}
