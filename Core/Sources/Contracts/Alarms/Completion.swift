import Foundation

/// What became of an occurrence (`chronir-api.md` §3.4).
public enum CompletionStatus: String, Codable, Sendable, CaseIterable {
    /// Marked done by a member.
    case completed
    /// Marked skipped by a member.
    case skipped
    /// Its missed window passed unmarked.
    case missed
    /// Its missed window passed unmarked while it was snoozed.
    case snoozedExpired = "snoozed_expired"

    /// Logged by the missed window, nobody having marked it (a late mark may still replace it).
    public var unmarked: Bool { self == .missed || self == .snoozedExpired }
}

/// A completion log entry (`chronir-api.md` §3.4). Immutable once written.
public struct Completion: Codable, Sendable, Equatable {
    public var id: String
    public var alarmId: String
    /// Who marked it (null for `missed`, which nobody marked).
    public var userId: String?
    public var userDisplayName: String?
    public var status: CompletionStatus
    /// The occurrence it is about.
    public var scheduledDate: Date
    /// When it was marked.
    public var completedAt: Date
    public var note: String?
    /// Completed within the missed window after the occurrence.
    public var onTime: Bool
    public var createdAt: Date
    /// How many times the occurrence was snoozed before this (US-5.2 "Snoozed then Completed").
    public var snoozeCount: Int
    /// Set when a completion or skip came after the missed window had logged the occurrence
    /// `missed` (an offline device, a late tap): the log changed in place; this is when.
    public var lateAt: Date?

    public init(id: String, alarmId: String, userId: String?, userDisplayName: String?, status: CompletionStatus, scheduledDate: Date,
                completedAt: Date, note: String?, onTime: Bool, createdAt: Date, snoozeCount: Int = 0, lateAt: Date? = nil) {
        self.snoozeCount = snoozeCount
        self.lateAt = lateAt
        self.id = id
        self.alarmId = alarmId
        self.userId = userId
        self.userDisplayName = userDisplayName
        self.status = status
        self.scheduledDate = scheduledDate
        self.completedAt = completedAt
        self.note = note
        self.onTime = onTime
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, alarmId, userId, userDisplayName, status, scheduledDate, completedAt, note, onTime, createdAt, snoozeCount, lateAt
    }

    /// Decodes a log; `snoozeCount` and `lateAt` (added in 0.3) default when a peer of an
    /// older release leaves them out.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        alarmId = try c.decode(String.self, forKey: .alarmId)
        userId = try c.decodeIfPresent(String.self, forKey: .userId)
        userDisplayName = try c.decodeIfPresent(String.self, forKey: .userDisplayName)
        status = try c.decode(CompletionStatus.self, forKey: .status)
        scheduledDate = try c.decode(Date.self, forKey: .scheduledDate)
        completedAt = try c.decode(Date.self, forKey: .completedAt)
        note = try c.decodeIfPresent(String.self, forKey: .note)
        onTime = try c.decode(Bool.self, forKey: .onTime)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        snoozeCount = try c.decodeIfPresent(Int.self, forKey: .snoozeCount) ?? 0
        lateAt = try c.decodeIfPresent(Date.self, forKey: .lateAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(alarmId, forKey: .alarmId)
        try c.encodeNullable(userId, forKey: .userId)
        try c.encodeNullable(userDisplayName, forKey: .userDisplayName)
        try c.encode(status, forKey: .status)
        try c.encodeNullable(scheduledDate, forKey: .scheduledDate)
        try c.encode(completedAt, forKey: .completedAt)
        try c.encodeNullable(note, forKey: .note)
        try c.encode(onTime, forKey: .onTime)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(snoozeCount, forKey: .snoozeCount)
        try c.encodeNullable(lateAt, forKey: .lateAt)
    }
}

/// `POST /v1/alarms/{id}/completions`.
public struct CompletionCreate: Codable, Sendable {
    public var alarmId: String
    /// `completed` or `skipped`.
    public var status: String
    /// The occurrence (default: the alarm's pending occurrence).
    public var scheduledDate: Date?
    public var note: String?
    /// When the user marked it on their device (an offline mark sent later); default: when
    /// the server receives it. At most 5 minutes ahead of the server's clock, not before the
    /// occurrence's window opened (the occurrence before it, or 400 days before it). A time more
    /// than 72 hours before the request is kept but does not count as on time.
    public var completedAt: Date?
    /// The id the new log takes, chosen by the gateway for each HTTP request (not by clients: it
    /// overwrites theirs), so the same request retried on another replica after the first died
    /// finds the log the first one wrote and answers it instead of marking the next occurrence.
    /// Absent: the service picks one.
    public var completionId: String?

    public init(alarmId: String, status: String, scheduledDate: Date? = nil, note: String? = nil, completedAt: Date? = nil,
                completionId: String? = nil) {
        self.completedAt = completedAt
        self.completionId = completionId
        self.alarmId = alarmId
        self.status = status
        self.scheduledDate = scheduledDate
        self.note = note
    }
}

/// What recording a completion answers.
public struct CompletionRecorded: Codable, Sendable {
    public var completion: Completion
    /// The alarm after the completion (its next occurrence).
    public var alarm: Alarm
    /// False when this occurrence already had a log (the existing one is returned).
    public var created: Bool

    public init(completion: Completion, alarm: Alarm, created: Bool) {
        self.completion = completion
        self.alarm = alarm
        self.created = created
    }
}

/// `GET /v1/alarms/{id}/completions`: newest first, filtered, paginated.
public struct CompletionQuery: Codable, Sendable {
    public var alarmId: String
    public var userId: String?
    public var status: String?
    /// Occurrences at or after this instant.
    public var from: Date?
    /// Occurrences before this instant.
    public var to: Date?
    public var limit: Int?
    public var cursor: String?

    public init(alarmId: String, userId: String? = nil, status: String? = nil, from: Date? = nil, to: Date? = nil,
                limit: Int? = nil, cursor: String? = nil) {
        self.alarmId = alarmId
        self.userId = userId
        self.status = status
        self.from = from
        self.to = to
        self.limit = limit
        self.cursor = cursor
    }
}

/// A page of completion history with the alarm's current streak.
public struct CompletionPage: Codable, Sendable {
    public var completions: [Completion]
    public var nextCursor: String?
    /// Consecutive most recent occurrences completed on time.
    public var streak: Int
    /// Free (US-5.2): the page holds the last completion only; the rest is kept and shown
    /// again after an upgrade.
    public var historyLocked: Bool
    /// Logs the lock hides.
    public var hiddenCount: Int

    public init(completions: [Completion], nextCursor: String?, streak: Int, historyLocked: Bool = false, hiddenCount: Int = 0) {
        self.historyLocked = historyLocked
        self.hiddenCount = hiddenCount
        self.completions = completions
        self.nextCursor = nextCursor
        self.streak = streak
    }
}

/// A text document (CSV, iCalendar) as a reply payload.
public struct TextDocument: Codable, Sendable {
    public var contentType: String
    public var filename: String
    public var body: String

    public init(contentType: String, filename: String, body: String) {
        self.contentType = contentType
        self.filename = filename
        self.body = body
    }
}
