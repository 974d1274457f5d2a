import Foundation
import Schedules

/// An alarm as the API shows it (`chronir-api.md` §3.3).
public struct Alarm: Codable, Sendable, Equatable {
    /// The most people an alarm is shared with (`sharedWith`), its owner not counted.
    public static let maxSharedWith = 20

    public var id: String
    public var ownerId: String
    public var title: String
    public var note: String?
    public var photoURL: String?
    public var photoLocalPath: String?
    /// A free tag: Home, Health, Finance, …
    public var category: String?
    public var schedule: Schedule
    public var soundId: String
    public var vibrationEnabled: Bool
    /// The length a snooze takes when the request names none (US-1.4); the user's
    /// `defaultSnoozeMinutes` when the alarm was created without one.
    public var snoozeDurationMinutes: Int
    /// Snoozes allowed per occurrence before it must be completed or skipped (default 3).
    public var maxSnoozeCount: Int
    /// Until when the pending occurrence is snoozed (US-1.4 "Snoozed until …"): set by a
    /// snooze, cleared when the alarm moves on; a past instant means the snooze re-fired.
    public var snoozedUntil: Date?
    /// Snoozes of the pending occurrence so far ("Snoozed 2/3 times").
    public var snoozeCount: Int
    public var preAlarmWarningEnabled: Bool
    public var preAlarmWarningHours: Int
    /// Extended warnings (Plus): any of `7d`, `3d`, `1d`, `1h`.
    public var preAlarmOffsets: [String]
    public var requireDismissAction: Bool
    public var isActive: Bool
    public var isPaused: Bool
    /// The pending occurrence: the next one, or one that fired and awaits completion.
    /// Null when the schedule has ended.
    public var nextFireDate: Date?
    public var lastFiredDate: Date?
    public var lastCompletedDate: Date?
    public var isShared: Bool
    public var sharedWith: [String]
    public var groupId: String?
    public var assignedTo: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var deletedAt: Date?
    public var version: Int

    public init(id: String, ownerId: String, title: String, note: String?, photoURL: String?, photoLocalPath: String?,
                category: String?, schedule: Schedule, soundId: String, vibrationEnabled: Bool, snoozeDurationMinutes: Int,
                preAlarmWarningEnabled: Bool, preAlarmWarningHours: Int, preAlarmOffsets: [String], requireDismissAction: Bool,
                isActive: Bool, isPaused: Bool, nextFireDate: Date?, lastFiredDate: Date?, lastCompletedDate: Date?,
                isShared: Bool, sharedWith: [String], groupId: String?, assignedTo: String?, createdAt: Date, updatedAt: Date,
                deletedAt: Date?, version: Int, maxSnoozeCount: Int = 3, snoozedUntil: Date? = nil, snoozeCount: Int = 0) {
        self.id = id
        self.ownerId = ownerId
        self.title = title
        self.note = note
        self.photoURL = photoURL
        self.photoLocalPath = photoLocalPath
        self.category = category
        self.schedule = schedule
        self.soundId = soundId
        self.vibrationEnabled = vibrationEnabled
        self.snoozeDurationMinutes = snoozeDurationMinutes
        self.maxSnoozeCount = maxSnoozeCount
        self.snoozedUntil = snoozedUntil
        self.snoozeCount = snoozeCount
        self.preAlarmWarningEnabled = preAlarmWarningEnabled
        self.preAlarmWarningHours = preAlarmWarningHours
        self.preAlarmOffsets = preAlarmOffsets
        self.requireDismissAction = requireDismissAction
        self.isActive = isActive
        self.isPaused = isPaused
        self.nextFireDate = nextFireDate
        self.lastFiredDate = lastFiredDate
        self.lastCompletedDate = lastCompletedDate
        self.isShared = isShared
        self.sharedWith = sharedWith
        self.groupId = groupId
        self.assignedTo = assignedTo
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.deletedAt = deletedAt
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case id, ownerId, title, note, photoURL, photoLocalPath, category, schedule, soundId, vibrationEnabled, snoozeDurationMinutes,
             maxSnoozeCount, snoozedUntil, snoozeCount,
             preAlarmWarningEnabled, preAlarmWarningHours, preAlarmOffsets, requireDismissAction, isActive, isPaused, nextFireDate,
             lastFiredDate, lastCompletedDate, isShared, sharedWith, groupId, assignedTo, createdAt, updatedAt, deletedAt, version
    }

    /// Decodes an alarm; the snooze fields added in 0.3 default when a peer of an older release
    /// leaves them out (a rolling upgrade).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        ownerId = try c.decode(String.self, forKey: .ownerId)
        title = try c.decode(String.self, forKey: .title)
        note = try c.decodeIfPresent(String.self, forKey: .note)
        photoURL = try c.decodeIfPresent(String.self, forKey: .photoURL)
        photoLocalPath = try c.decodeIfPresent(String.self, forKey: .photoLocalPath)
        category = try c.decodeIfPresent(String.self, forKey: .category)
        schedule = try c.decode(Schedule.self, forKey: .schedule)
        soundId = try c.decode(String.self, forKey: .soundId)
        vibrationEnabled = try c.decode(Bool.self, forKey: .vibrationEnabled)
        snoozeDurationMinutes = try c.decode(Int.self, forKey: .snoozeDurationMinutes)
        maxSnoozeCount = try c.decodeIfPresent(Int.self, forKey: .maxSnoozeCount) ?? 3
        snoozedUntil = try c.decodeIfPresent(Date.self, forKey: .snoozedUntil)
        snoozeCount = try c.decodeIfPresent(Int.self, forKey: .snoozeCount) ?? 0
        preAlarmWarningEnabled = try c.decode(Bool.self, forKey: .preAlarmWarningEnabled)
        preAlarmWarningHours = try c.decode(Int.self, forKey: .preAlarmWarningHours)
        preAlarmOffsets = try c.decode([String].self, forKey: .preAlarmOffsets)
        requireDismissAction = try c.decode(Bool.self, forKey: .requireDismissAction)
        isActive = try c.decode(Bool.self, forKey: .isActive)
        isPaused = try c.decode(Bool.self, forKey: .isPaused)
        nextFireDate = try c.decodeIfPresent(Date.self, forKey: .nextFireDate)
        lastFiredDate = try c.decodeIfPresent(Date.self, forKey: .lastFiredDate)
        lastCompletedDate = try c.decodeIfPresent(Date.self, forKey: .lastCompletedDate)
        isShared = try c.decode(Bool.self, forKey: .isShared)
        sharedWith = try c.decode([String].self, forKey: .sharedWith)
        groupId = try c.decodeIfPresent(String.self, forKey: .groupId)
        assignedTo = try c.decodeIfPresent(String.self, forKey: .assignedTo)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
        deletedAt = try c.decodeIfPresent(Date.self, forKey: .deletedAt)
        version = try c.decode(Int.self, forKey: .version)
    }

    /// Encodes absent values as `null`, as the API's TypeScript interface shows them.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(ownerId, forKey: .ownerId)
        try c.encode(title, forKey: .title)
        try c.encodeNullable(note, forKey: .note)
        try c.encodeNullable(photoURL, forKey: .photoURL)
        try c.encodeNullable(photoLocalPath, forKey: .photoLocalPath)
        try c.encodeNullable(category, forKey: .category)
        try c.encode(schedule, forKey: .schedule)
        try c.encode(soundId, forKey: .soundId)
        try c.encode(vibrationEnabled, forKey: .vibrationEnabled)
        try c.encode(snoozeDurationMinutes, forKey: .snoozeDurationMinutes)
        try c.encode(maxSnoozeCount, forKey: .maxSnoozeCount)
        try c.encodeNullable(snoozedUntil, forKey: .snoozedUntil)
        try c.encode(snoozeCount, forKey: .snoozeCount)
        try c.encode(preAlarmWarningEnabled, forKey: .preAlarmWarningEnabled)
        try c.encode(preAlarmWarningHours, forKey: .preAlarmWarningHours)
        try c.encode(preAlarmOffsets, forKey: .preAlarmOffsets)
        try c.encode(requireDismissAction, forKey: .requireDismissAction)
        try c.encode(isActive, forKey: .isActive)
        try c.encode(isPaused, forKey: .isPaused)
        try c.encodeNullable(nextFireDate, forKey: .nextFireDate)
        try c.encodeNullable(lastFiredDate, forKey: .lastFiredDate)
        try c.encodeNullable(lastCompletedDate, forKey: .lastCompletedDate)
        try c.encode(isShared, forKey: .isShared)
        try c.encode(sharedWith, forKey: .sharedWith)
        try c.encodeNullable(groupId, forKey: .groupId)
        try c.encodeNullable(assignedTo, forKey: .assignedTo)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encodeNullable(deletedAt, forKey: .deletedAt)
        try c.encode(version, forKey: .version)
    }
}

/// The Plus pre-alarm offsets and their lengths in minutes.
public enum PreAlarmOffset {
    public static let all: [String: Int] = ["7d": 10_080, "3d": 4_320, "1d": 1_440, "1h": 60]
}
