import AlarmsCore
import Contracts
import Crypto
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO
import Schedules

/// Create, read, update and delete of alarms.
struct AlarmHandlers: Sendable {
    let store: AlarmStore
    let changes: AlarmChanges
    let outbox: OutboxWriter
    /// Who may add alarms to a group, and its members.
    let groups: GroupAccess
    /// Creations allowed per minute per user (§13.3).
    let creationsPerMinute: Int
    /// The most alarms (not deleted, active or not) one account holds.
    var alarmsPerAccount = 2_000

    var database: Database { store.database }

    func register(into router: inout RPCRouter) {
        router.on(AlarmsMethods.Create.self) { req, ctx in try await create(req, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.BatchImport.self) { req, ctx in try await batchImport(req, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.Get.self) { req, ctx in try await get(req.id, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.Update.self) { req, ctx in try await update(req, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.Delete.self) { req, ctx in try await delete(req, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.RemoveMember.self) { req, ctx in try await removeMember(req, actor: try ctx.requireActor()) }
    }

    // MARK: Create

    func create(_ req: AlarmCreate, actor: String, rateLimited: Bool = true) async throws -> AlarmCreated {
        if let id = req.id { try AlarmRules.id(id) }
        let id = req.id ?? UUIDv7.string()
        let title = try AlarmRules.title(req.title)
        try AlarmRules.text(req.note, field: "note", max: 500)
        try AlarmRules.url(req.photoURL, field: "photoURL")
        try AlarmRules.text(req.photoLocalPath, field: "photoLocalPath", max: 1024)
        try AlarmRules.text(req.category, field: "category", max: 40)
        try AlarmRules.text(req.soundId, field: "soundId", max: 64)
        if let snooze = req.snoozeDurationMinutes { try AlarmRules.range(snooze, field: "snoozeDurationMinutes", SnoozeRules.customRange) }
        let maxSnoozes = req.maxSnoozeCount ?? 3
        try AlarmRules.range(maxSnoozes, field: "maxSnoozeCount", SnoozeRules.maxCountRange)
        let warningHours = req.preAlarmWarningHours ?? 24
        try AlarmRules.range(warningHours, field: "preAlarmWarningHours", 1...168)
        let offsets = try AlarmRules.offsets(req.preAlarmOffsets ?? [])
        let compiled = try AlarmRules.compile(req.schedule)
        let asked = try AlarmRules.members(req.sharedWith ?? [], owner: actor)
        var canonical = req
        canonical.id = id
        let fingerprint = Hex.lowercase(SHA256.hash(data: try JSONCoding.encode(canonical)))
        let now = Date()
        let next = compiled.next(after: now)
        let groupAsked = try await groups.ask(req.groupId, actor: actor)

        let result: AlarmCreated = try await outbox.transaction(wakes: \.created) { c in
            try await store.lockOwner(actor, on: c)
            if let existing = try await store.fingerprint(id, on: c) {
                guard existing.owner == actor, existing.fingerprint == fingerprint, let alarm = try await store.load(id, on: c) else {
                    throw ServiceError(.alreadyExists, "an alarm with id \(id) already exists with a different body")
                }
                return AlarmCreated(alarm: alarm, created: false)
            }
            let recent = try await store.recentCreations(owner: actor, window: 60, on: c)
            if rateLimited, let retry = WindowLimit(creationsPerMinute, per: 60).retryAfter(count: recent.count, oldest: recent.oldest, now: now) {
                throw ServiceError.rateLimited("at most \(creationsPerMinute) alarms may be created per minute", retryAfter: retry)
            }
            let tier = try await store.tier(of: actor, on: c)
            // Left out, the length is the user's default snooze (US-7.1), else an hour.
            var snooze = 60
            if let given = req.snoozeDurationMinutes { snooze = given } else if let mine = try await store.defaultSnoozeMinutes(of: actor, on: c) {
                snooze = mine
            }
            var groupMembers: [String] = []
            if let group = req.groupId {
                guard let members = try await groups.managedMembers(group, actor: actor, asked: groupAsked, on: c) else {
                    throw ServiceError(.permissionDenied, "group \(group)'s rules do not let you add alarms to it")
                }
                groupMembers = members
            }
            let requested = asked
            let sharedWith = Array(Set(asked).union(groupMembers).subtracting([actor])).sorted()
            let alarm = Alarm(
                id: id, ownerId: actor, title: title, note: req.note, photoURL: req.photoURL, photoLocalPath: req.photoLocalPath,
                category: req.category, schedule: req.schedule, soundId: req.soundId ?? "default",
                vibrationEnabled: req.vibrationEnabled ?? true, snoozeDurationMinutes: snooze,
                preAlarmWarningEnabled: req.preAlarmWarningEnabled ?? true, preAlarmWarningHours: warningHours,
                preAlarmOffsets: offsets, requireDismissAction: req.requireDismissAction ?? true,
                isActive: (req.isActive ?? true) && next != nil, isPaused: req.isPaused ?? false, nextFireDate: next,
                lastFiredDate: nil, lastCompletedDate: nil, isShared: !sharedWith.isEmpty, sharedWith: sharedWith,
                groupId: req.groupId, assignedTo: req.assignedTo, createdAt: now, updatedAt: now, deletedAt: nil, version: 1,
                maxSnoozeCount: maxSnoozes
            )
            if let assignee = alarm.assignedTo, !alarm.members.contains(assignee) {
                throw ServiceError(.validationFailed, "assignedTo must be the owner or a member the alarm is shared with")
            }
            let covered = try await req.groupId.asyncMap { try await store.groupOwnerIsPremium($0, on: c) } ?? false
            try AlarmRules.checkTier(try await store.tierStanding(of: actor, on: c), alarm: alarm, previous: nil, groupCovered: covered)
            // A new alarm is shared only with its group: anyone else accepts an invitation first.
            try AlarmSharing.checkConsent(requested, allowed: AlarmSharing.allowed(previous: [], groupMembers: groupMembers))
            try await checkRoom(for: alarm, tier: tier, on: c)
            try await store.insert(alarm, fingerprint: fingerprint, on: c)
            try await changes.record(before: nil, after: alarm, actor: actor, on: c)
            return AlarmCreated(alarm: alarm, created: true)
        }
        return result
    }

    /// Throws `CA001` when the owner has no room for one more alarm: the tier's active alarms,
    /// or the alarms an account holds at all.
    private func checkRoom(for alarm: Alarm, tier: Tier, on c: PostgresConnection) async throws {
        if alarm.isActive, let limit = tier.activeAlarmLimit, try await store.countActive(owner: alarm.ownerId, on: c) >= limit {
            throw ServiceError(.alarmLimitReached, "the free tier allows \(limit) active alarms; disable one or upgrade to Plus")
        }
        if try await store.countStored(owner: alarm.ownerId, on: c) >= alarmsPerAccount {
            throw ServiceError(.alarmLimitReached, "an account holds at most \(alarmsPerAccount) alarms, active or not; delete some first")
        }
    }

    // MARK: Read

    func get(_ id: String, actor: String) async throws -> Alarm {
        guard let alarm = try await store.load(id), alarm.isVisible(to: actor), alarm.deletedAt == nil else {
            throw Self.notFound(id)
        }
        return alarm
    }

    static func notFound(_ id: String) -> ServiceError {
        ServiceError(.alarmNotFound, "alarm \(id) not found")
    }

    static func checkVersion(_ expected: Int?, _ current: Alarm) throws {
        if let expected, expected != current.version {
            throw ServiceError(.syncConflict, "alarm \(current.id) is at version \(current.version), not \(expected)",
                               details: try JSONValue.from(current))
        }
    }

    // MARK: Update

    /// Who may change what, the version, tiers and limits, then the patch itself
    /// (`Alarm.applying`, `Domain/AlarmPatching.swift`); `AlarmChanges.revise` writes the row
    /// and its events (a patch that changes nothing writes nothing and keeps the version).
    func update(_ patch: AlarmPatch, actor: String) async throws -> Alarm {
        let now = Date()
        // A group joined: accounts is asked first when the copy does not know the caller there
        // (a patch that names the alarm's own group joins nothing).
        var groupJoined = patch.groupId.value
        if let g = groupJoined, try await store.load(patch.id)?.groupId == g { groupJoined = nil }
        let groupAsked = try await groups.ask(groupJoined, actor: actor)
        let updated: Alarm? = try await outbox.transaction { c in
            // The group named is locked before the alarm's row, as a membership change locks the
            // group before the rows it reshares (``AlarmStore/lockGroup(_:exclusive:on:)``).
            if let g = patch.groupId.value { try await store.lockGroup(g, exclusive: false, on: c) }
            return try await changes.revise(patch.id, actor: actor, at: now, on: c) { alarm in
                let a = alarm
                guard a.isVisible(to: actor), a.deletedAt == nil else { throw Self.notFound(patch.id) }
                let isOwner = a.ownerId == actor
                var groupEditor = false
                if !isOwner, let g = a.groupId {
                    groupEditor = try await store.mayEditGroupAlarms(group: g, user: actor, on: c) ?? false
                }
                guard isOwner || groupEditor else {
                    throw ServiceError(.permissionDenied, "only the owner, or whom its group lets edit its alarms, changes alarm \(a.id)")
                }
                try Self.checkVersion(patch.version, a)
                // The order of the checks decides which error a request with several faults gets:
                // fields, then who may share, then the members named, then the group joined.
                let fields = try a.applyingFields(patch)
                if patch.sharedWith.isPresent || patch.groupId.isPresent {
                    guard isOwner else { throw ServiceError(.permissionDenied, "only the owner changes who alarm \(a.id) is shared with") }
                }
                let requested = try patch.sharedWith.value.map { try AlarmRules.members($0, owner: a.ownerId) }
                var joining: [String]? = nil
                if let g = patch.groupId.value, g != a.groupId {
                    guard let members = try await groups.managedMembers(g, actor: actor, asked: groupAsked, on: c) else {
                        throw ServiceError(.permissionDenied, "group \(g)'s rules do not let you add alarms to it")
                    }
                    joining = members
                }
                let n = try fields.applyingSharing(patch, previous: a, joiningGroupMembers: joining, now: now)
                let standing = try await store.tierStanding(of: a.ownerId, on: c)
                let tier = standing.tier
                let covered = try await n.groupId.asyncMap { try await store.groupOwnerIsPremium($0, on: c) } ?? false
                try AlarmRules.checkTier(standing, alarm: n, previous: a, groupCovered: covered)
                if let requested {
                    // Members stay or go; new ones come only from the alarm's group (by consent, §6.2).
                    var groupMembers = joining ?? []
                    if joining == nil, patch.groupId != .cleared, let g = a.groupId {
                        groupMembers = try await store.groupMembers(group: g, on: c)
                    }
                    try AlarmSharing.checkConsent(requested, allowed: AlarmSharing.allowed(previous: a.sharedWith, groupMembers: groupMembers))
                }
                if n.isActive && !a.isActive, let limit = tier.activeAlarmLimit {
                    try await store.lockOwner(a.ownerId, on: c)
                    if try await store.countActive(owner: a.ownerId, excluding: a.id, on: c) >= limit {
                        throw ServiceError(.alarmLimitReached, "the free tier allows \(limit) active alarms; disable one or upgrade to Plus")
                    }
                }
                alarm = n
            }?.after
        }
        guard let updated else { throw Self.notFound(patch.id) }
        return updated
    }

    // MARK: Delete

    func delete(_ ref: AlarmRef, actor: String) async throws -> Alarm {
        let now = Date()
        let deleted: Alarm? = try await outbox.transaction { c in
            try await changes.revise(ref.id, actor: actor, at: now, on: c) { a in
                guard a.isVisible(to: actor), a.deletedAt == nil else { throw Self.notFound(ref.id) }
                guard a.ownerId == actor else { throw ServiceError(.permissionDenied, "only the owner deletes alarm \(a.id)") }
                try Self.checkVersion(ref.version, a)
                a = AlarmLifecycle.deleted(a, at: now)
            }?.after
        }
        guard let deleted else { throw Self.notFound(ref.id) }
        return deleted
    }
}
