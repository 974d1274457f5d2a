import Foundation
import Schedules

/// An alarm as the API shows it (`chronir-api.md` §3.3).
public struct Alarm: Codable, Sendable, Equatable {
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
    public var snoozeDurationMinutes: Int
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
                deletedAt: Date?, version: Int) {
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
             preAlarmWarningEnabled, preAlarmWarningHours, preAlarmOffsets, requireDismissAction, isActive, isPaused, nextFireDate,
             lastFiredDate, lastCompletedDate, isShared, sharedWith, groupId, assignedTo, createdAt, updatedAt, deletedAt, version
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
