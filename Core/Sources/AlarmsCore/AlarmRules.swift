import Contracts
import Foundation
import Wire
import Schedules

/// Field limits and defaults of alarms; every failure names its field.
public enum AlarmRules {
    public static let idPattern = #"^[A-Za-z0-9_-]{8,64}$"#

    public static func title(_ raw: String) throws -> String {
        let t = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !t.isEmpty else { throw ServiceError(.validationFailed, "title must not be empty") }
        guard t.count <= 100 else { throw ServiceError(.validationFailed, "title must be at most 100 characters") }
        try HumanText.check(t, field: "title")
        return t
    }

    public static func id(_ id: String) throws {
        guard id.range(of: idPattern, options: .regularExpression) != nil else {
            throw ServiceError(.validationFailed, "id must be 8–64 letters, digits, '-' or '_'")
        }
    }

    /// At most `max` characters and no control characters (``HumanText``); notes alone may
    /// hold line breaks.
    public static func text(_ value: String?, field: String, max: Int) throws {
        guard let v = value else { return }
        if v.count > max { throw ServiceError(.validationFailed, "\(field) must be at most \(max) characters") }
        try HumanText.check(v, field: field, multiline: field == "note")
    }

    public static func url(_ value: String?, field: String) throws {
        guard let v = value else { return }
        // The server's own photo path (set by a photo upload) round-trips through edits.
        if v.hasPrefix("/v1/alarms/"), v.count <= 200 { return }
        guard v.count <= 2048, let u = URL(string: v), let s = u.scheme, ["http", "https"].contains(s), u.host != nil else {
            throw ServiceError(.validationFailed, "\(field) must be an http(s) URL")
        }
    }

    public static func range(_ value: Int, field: String, _ r: ClosedRange<Int>) throws {
        guard r.contains(value) else { throw ServiceError(.validationFailed, "\(field) must be \(r.lowerBound)–\(r.upperBound)") }
    }

    public static func offsets(_ values: [String]) throws -> [String] {
        for v in values where PreAlarmOffset.all[v] == nil {
            throw ServiceError(.validationFailed, "preAlarmOffsets contains \"\(v)\"; allowed: 7d, 3d, 1d, 1h")
        }
        return Array(Set(values)).sorted { PreAlarmOffset.all[$0]! > PreAlarmOffset.all[$1]! }
    }

    public static func members(_ values: [String], owner: String) throws -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for v in values {
            guard !v.isEmpty, v.count <= 64 else { throw ServiceError(.validationFailed, "sharedWith must contain user ids") }
            if v != owner, seen.insert(v).inserted { out.append(v) }
        }
        guard out.count <= Alarm.maxSharedWith else { throw ServiceError(.validationFailed, "sharedWith may list at most \(Alarm.maxSharedWith) users") }
        return out
    }

    /// Compiles the schedule, turning a schedule error into `CA008`.
    public static func compile(_ schedule: Schedule) throws -> CompiledSchedule {
        do {
            return try schedule.compile()
        } catch let e as ScheduleError {
            throw ServiceError(.scheduleInvalid, e.message)
        }
    }

    /// `alarm` switched back on at `now` (after an upgrade lifts the limit that switched it
    /// off): its next occurrence from now; still off when the schedule has none left.
    public static func reactivated(_ alarm: Alarm, now: Date) throws -> Alarm {
        var n = alarm
        n.nextFireDate = try compile(alarm.schedule).next(after: now)
        n.isActive = n.nextFireDate != nil
        return n
    }

    /// The tier rules of §1.2, §7 and US-8.1, applied to what a write adds: a downgraded user
    /// keeps notes, warnings and shared members they already have, but cannot add more.
    /// `groupCovered`: the alarm's group belongs to a Premium owner, whose plan covers the
    /// alarms its members add to it (the household pays once).
    public static func checkTier(_ standing: TierStanding, alarm a: Alarm, previous p: Alarm?, groupCovered: Bool = false) throws {
        if a.soundId != p?.soundId {
            guard let sound = Sound.named(a.soundId) else {
                throw ServiceError(.validationFailed, "soundId \(a.soundId) is not a sound of the catalogue (GET /v1/sounds)",
                                   details: .object(["field": .string("soundId")]))
            }
            try standing.require(sound.tier, "the sound \(sound.name) needs \(sound.tier.rawValue.capitalized) (Free has 2 sounds)")
        }
        if let note = a.note, !note.isEmpty, note != p?.note { try standing.require(.plus, "notes need Plus") }
        if let photo = a.photoURL, photo != p?.photoURL { try standing.require(.plus, "photo attachments need Plus") }
        if !Set(a.preAlarmOffsets).isSubset(of: Set(p?.preAlarmOffsets ?? [])) {
            try standing.require(.plus, "extended pre-alarm warnings (7d, 3d, 1d, 1h) need Plus")
        }
        if a.preAlarmWarningEnabled && a.preAlarmWarningHours != 24 && a.preAlarmWarningHours != p?.preAlarmWarningHours {
            try standing.require(.plus, "pre-alarm warnings other than 24 hours need Plus")
        }
        if !groupCovered {
            let gained = Set(a.sharedWith).subtracting(p?.sharedWith ?? [])
            if !gained.isEmpty { try standing.require(.premium, "sharing alarms needs Premium") }
            if let g = a.groupId, g != p?.groupId { try standing.require(.premium, "group alarms need Premium") }
        }
    }
}

extension Tier {
    /// Active alarms allowed (nil: unlimited).
    public var activeAlarmLimit: Int? { self == .free ? 2 : nil }
}
