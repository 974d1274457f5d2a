import Foundation

/// A recurrence as clients send it (`chronir-api.md` §3.3, plus `interval` and type `once`).
///
/// Decoding is lenient (every member optional, `type` a plain string) so that every mistake
/// reaches ``compile()``, which rejects it with a ``ScheduleError`` naming the field.
public struct Schedule: Codable, Sendable, Equatable, Hashable {
    /// `weekly`, `monthly`, `annual`, `custom` or `once`.
    public var type: String
    /// Weekly: ISO weekdays, 1 = Monday … 7 = Sunday.
    public var daysOfWeek: [Int]?
    /// Monthly fixed: 1–31, 0 = the last day; clamped to the month's length.
    public var dayOfMonth: Int?
    /// Monthly: `fixed` or `relative` (inferred from the fields given when null).
    public var monthlyType: String?
    /// Monthly relative: 1–4, or 5 = last.
    public var relativeWeek: Int?
    /// Monthly relative: ISO weekday 1–7.
    public var relativeDayOfWeek: Int?
    /// Annual: 1–12.
    public var month: Int?
    /// Annual: day of `month`; Feb 29 falls on Feb 28 in common years.
    public var dayOfMonthAnnual: Int?
    /// Custom: every N days.
    public var intervalDays: Int?
    /// Weekly, monthly, annual: every N weeks, months or years (default 1).
    public var interval: Int?
    /// Local wall-clock time, `HH:mm`, 24-hour.
    public var timeOfDay: String
    /// IANA time zone the schedule lives in.
    public var timezone: String
    /// Occurrences start on the local calendar date of this instant.
    public var startDate: Date
    /// No occurrence after this instant (inclusive); nil = no end.
    public var endDate: Date?
    /// US-7.3: `true` follows the owner as they travel — `timezone` becomes the zone of their
    /// most recently active device or profile and the alarm keeps its wall-clock time there;
    /// `false` or absent is fixed: `timezone` stays (absent keeps what clients before 0.3 meant).
    public var floating: Bool?

    public init(type: String, daysOfWeek: [Int]? = nil, dayOfMonth: Int? = nil, monthlyType: String? = nil,
                relativeWeek: Int? = nil, relativeDayOfWeek: Int? = nil, month: Int? = nil, dayOfMonthAnnual: Int? = nil,
                intervalDays: Int? = nil, interval: Int? = nil, timeOfDay: String, timezone: String,
                startDate: Date, endDate: Date? = nil, floating: Bool? = nil) {
        self.floating = floating
        self.type = type
        self.daysOfWeek = daysOfWeek
        self.dayOfMonth = dayOfMonth
        self.monthlyType = monthlyType
        self.relativeWeek = relativeWeek
        self.relativeDayOfWeek = relativeDayOfWeek
        self.month = month
        self.dayOfMonthAnnual = dayOfMonthAnnual
        self.intervalDays = intervalDays
        self.interval = interval
        self.timeOfDay = timeOfDay
        self.timezone = timezone
        self.startDate = startDate
        self.endDate = endDate
    }

    enum CodingKeys: String, CodingKey {
        case type, daysOfWeek, dayOfMonth, monthlyType, relativeWeek, relativeDayOfWeek, month, dayOfMonthAnnual,
             intervalDays, interval, timeOfDay, timezone, startDate, endDate, floating
    }

    /// Encodes every member, `null` for absent ones, as the API's interface shows them.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(type, forKey: .type)
        try c.encodeNullable(daysOfWeek, forKey: .daysOfWeek)
        try c.encodeNullable(dayOfMonth, forKey: .dayOfMonth)
        try c.encodeNullable(monthlyType, forKey: .monthlyType)
        try c.encodeNullable(relativeWeek, forKey: .relativeWeek)
        try c.encodeNullable(relativeDayOfWeek, forKey: .relativeDayOfWeek)
        try c.encodeNullable(month, forKey: .month)
        try c.encodeNullable(dayOfMonthAnnual, forKey: .dayOfMonthAnnual)
        try c.encodeNullable(intervalDays, forKey: .intervalDays)
        try c.encodeNullable(interval, forKey: .interval)
        try c.encode(timeOfDay, forKey: .timeOfDay)
        try c.encode(timezone, forKey: .timezone)
        try c.encode(startDate, forKey: .startDate)
        try c.encodeNullable(endDate, forKey: .endDate)
        // Only when set: a fixed schedule encodes as it did before 0.3 (create fingerprints stay).
        try c.encodeIfPresent(floating, forKey: .floating)
    }
}

/// Why a schedule is impossible: the offending field (`schedule.<member>`) and a sentence.
/// Callers answer it as `CA008 SCHEDULE_INVALID`.
public struct ScheduleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The member at fault, e.g. `schedule.dayOfMonth`.
    public var field: String
    /// What is wrong, naming the field.
    public var message: String

    public init(_ field: String, _ message: String) {
        self.field = "schedule.\(field)"
        self.message = "schedule.\(field) \(message)"
    }

    public var description: String { message }
}

extension KeyedEncodingContainer {
    /// An optional as its value or `null`, through the concrete overloads (cheaper than the
    /// generic encode of an `Optional`).
    mutating func encodeNullable<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
