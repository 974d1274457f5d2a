import Contracts
import Foundation
import Wire

extension Alarm {
    /// This alarm with `patch` applied, every field checked (`CA016`; `CA008` for the
    /// schedule): sharing recomputed (the members of a group it joins are added), the assignee
    /// checked against the new members, and the next fire recomputed when the schedule changes
    /// or the alarm is switched back on (an alarm with no next occurrence is switched off).
    ///
    /// Pure: who may patch, the version, the owner's tier and limits are the caller's, as are
    /// `version` and `updatedAt` of the result. `joiningGroupMembers`: the members of the group
    /// `patch` moves the alarm into, nil when its group does not change.
    public func applying(_ patch: AlarmPatch, joiningGroupMembers: [String]?, now: Date) throws -> Alarm {
        try applyingFields(patch).applyingSharing(patch, previous: self, joiningGroupMembers: joiningGroupMembers, now: now)
    }

    /// The first half of ``applying(_:joiningGroupMembers:now:)``: every field but sharing,
    /// group, assignee and schedule, each checked. The handler runs it before deciding who may
    /// change sharing, so a bad field is reported first (as it always was).
    public func applyingFields(_ patch: AlarmPatch) throws -> Alarm {
        let a = self
        var n = a
        if case .cleared = patch.title { throw ServiceError(.validationFailed, "title cannot be null") }
        if let t = patch.title.value { n.title = try AlarmRules.title(t) }
        if let v = patch.note.value { try AlarmRules.text(v, field: "note", max: 500) }
        n.note = patch.note.applied(to: a.note)
        if let v = patch.photoURL.value { try AlarmRules.url(v, field: "photoURL") }
        n.photoURL = patch.photoURL.applied(to: a.photoURL)
        if let v = patch.photoLocalPath.value { try AlarmRules.text(v, field: "photoLocalPath", max: 1024) }
        n.photoLocalPath = patch.photoLocalPath.applied(to: a.photoLocalPath)
        if let v = patch.category.value { try AlarmRules.text(v, field: "category", max: 40) }
        n.category = patch.category.applied(to: a.category)
        if let v = patch.soundId.value { try AlarmRules.text(v, field: "soundId", max: 64) }
        n.soundId = try Self.required(patch.soundId, a.soundId, "soundId")
        n.vibrationEnabled = try Self.required(patch.vibrationEnabled, a.vibrationEnabled, "vibrationEnabled")
        n.snoozeDurationMinutes = try Self.required(patch.snoozeDurationMinutes, a.snoozeDurationMinutes, "snoozeDurationMinutes")
        try AlarmRules.range(n.snoozeDurationMinutes, field: "snoozeDurationMinutes", SnoozeRules.customRange)
        n.maxSnoozeCount = try Self.required(patch.maxSnoozeCount, a.maxSnoozeCount, "maxSnoozeCount")
        try AlarmRules.range(n.maxSnoozeCount, field: "maxSnoozeCount", SnoozeRules.maxCountRange)
        n.preAlarmWarningEnabled = try Self.required(patch.preAlarmWarningEnabled, a.preAlarmWarningEnabled, "preAlarmWarningEnabled")
        n.preAlarmWarningHours = try Self.required(patch.preAlarmWarningHours, a.preAlarmWarningHours, "preAlarmWarningHours")
        try AlarmRules.range(n.preAlarmWarningHours, field: "preAlarmWarningHours", 1...168)
        if let o = patch.preAlarmOffsets.value { n.preAlarmOffsets = try AlarmRules.offsets(o) }
        if case .cleared = patch.preAlarmOffsets { n.preAlarmOffsets = [] }
        n.requireDismissAction = try Self.required(patch.requireDismissAction, a.requireDismissAction, "requireDismissAction")
        n.isPaused = try Self.required(patch.isPaused, a.isPaused, "isPaused")
        n.isActive = try Self.required(patch.isActive, a.isActive, "isActive")
        return n
    }

    /// The second half: sharing, group, assignee, and the next fire, applied to the result of
    /// ``applyingFields(_:)``; `previous` is the alarm before the patch.
    public func applyingSharing(_ patch: AlarmPatch, previous a: Alarm, joiningGroupMembers: [String]?, now: Date) throws -> Alarm {
        var n = self
        if let members = patch.sharedWith.value { n.sharedWith = try AlarmRules.members(members, owner: a.ownerId) }
        if case .cleared = patch.sharedWith { n.sharedWith = [] }
        if let joining = joiningGroupMembers {
            n.sharedWith = Array(Set(n.sharedWith).union(joining).subtracting([a.ownerId])).sorted()
        }
        n.groupId = patch.groupId.applied(to: a.groupId)
        n.assignedTo = patch.assignedTo.applied(to: a.assignedTo)
        if let assignee = n.assignedTo, !n.members.contains(assignee) {
            throw ServiceError(.validationFailed, "assignedTo must be the owner or a member the alarm is shared with")
        }
        n.isShared = !n.sharedWith.isEmpty
        var recompute = !a.isActive && n.isActive
        if let schedule = patch.schedule.value {
            n.schedule = schedule
            recompute = true
        }
        if case .cleared = patch.schedule { throw ServiceError(.scheduleInvalid, "schedule cannot be null") }
        if recompute {
            let compiled = try AlarmRules.compile(n.schedule)
            n.nextFireDate = compiled.next(after: now)
            if n.nextFireDate == nil { n.isActive = false }
        }
        return n
    }

    /// A patch of a field that cannot be null: its new value, or the current one when absent.
    public static func required<T>(_ patch: Patch<T>, _ current: T, _ field: String) throws -> T {
        if case .cleared = patch { throw ServiceError(.validationFailed, "\(field) cannot be null") }
        return patch.value ?? current
    }
}
