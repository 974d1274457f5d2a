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

    public init(id: String, alarmId: String, userId: String?, userDisplayName: String?, status: CompletionStatus, scheduledDate: Date,
                completedAt: Date, note: String?, onTime: Bool, createdAt: Date) {
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
        case id, alarmId, userId, userDisplayName, status, scheduledDate, completedAt, note, onTime, createdAt
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

    public init(alarmId: String, status: String, scheduledDate: Date? = nil, note: String? = nil) {
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

    public init(completions: [Completion], nextCursor: String?, streak: Int) {
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
