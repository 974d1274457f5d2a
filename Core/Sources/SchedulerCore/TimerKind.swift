/// The kind of a scheduler timer, as `timers.kind` and `fires.kind` store it.
///
/// A word over its string (PSQLError's `Code` pattern): a kind this release does not know (one a
/// newer release wrote) is read as it is, never turned into another, and every decision that
/// switches on a kind says what it does with an unknown one (``FireOutcome/unknownKind(_:)``).
public struct TimerKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The occurrence rings.
    public static let fire = TimerKind("fire")
    /// One missed window after the occurrence (or its last re-fire): was it done?
    public static let missed = TimerKind("missed")
    /// A warning ahead of the occurrence (a pre-alarm, its offset in minutes).
    public static let pre = TimerKind("pre")
    /// A snoozed occurrence rings again.
    public static let snooze = TimerKind("snooze")

    /// Every kind this release writes.
    public static let known: [TimerKind] = [.fire, .missed, .pre, .snooze]

    public var isKnown: Bool { Self.known.contains(self) }
    public var description: String { rawValue }
}
