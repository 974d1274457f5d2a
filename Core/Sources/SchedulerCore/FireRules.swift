/// When a timer is taken from the wheel, which overdue ones the sweep and a take-over pick up,
/// and which are too late to ring. Instants in milliseconds since the epoch, `now` passed in.
public enum FireRules {
    /// How many milliseconds before its due instant a timer of `kind` is fired: missed checks at
    /// their instant (they look at what happened by then); everything that rings — an unknown
    /// kind too, so it is never late — `lead` ahead (`CHRONIR_FIRE_LEAD`), so the push is on the
    /// device before the instant.
    public static func lead(of kind: TimerKind, lead: Int64) -> Int64 { kind == .missed ? 0 : lead }

    /// The instant a timer is to be fired at: its due instant less its lead.
    public static func fireAt(due: Int64, kind: TimerKind, lead: Int64) -> Int64 { due - Self.lead(of: kind, lead: lead) }

    /// Whether the sweep takes a still-pending timer as overdue: its fire instant is more than
    /// `sweepLag` behind `now` (a batch fenced or abandoned, a timer committed out of id order).
    public static func isOverdue(due: Int64, kind: TimerKind, now: Int64, lead: Int64, sweepLag: Int64) -> Bool {
        fireAt(due: due, kind: kind, lead: lead) < now - sweepLag
    }

    /// Whether an overdue timer is past the grace window: fired now but recorded as missed,
    /// ringing nobody (a fire, warning or re-fire more than `grace` late is no use to a person).
    /// A missed check is never past grace: it looks at what happened, however late.
    public static func isPastGrace(due: Int64, kind: TimerKind, now: Int64, grace: Int64) -> Bool {
        kind != .missed && due < now - grace
    }
}

/// What a fired timer announces, from its kind and whether it fired past the grace window.
public enum FireOutcome: Equatable, Sendable {
    /// The occurrence was missed (its missed check, or its fire past grace): `OccurrenceMissed`.
    case missed
    /// The alarm rings (a fire or a snooze's re-fire, in time): `AlarmFired`.
    case fired
    /// A warning rings (in time): `PreAlarmDue`.
    case preAlarm
    /// Recorded, not announced: a warning or re-fire past the grace window.
    case silent
    /// Recorded, not announced, and logged: a kind this release does not know.
    case unknownKind(TimerKind)

    public static func of(kind: TimerKind, pastGrace: Bool) -> FireOutcome {
        switch (kind, pastGrace) {
        case (.fire, true), (.missed, _): return .missed
        case (.fire, false), (.snooze, false): return .fired
        case (.pre, false): return .preAlarm
        case (.pre, true), (.snooze, true): return .silent
        default: return .unknownKind(kind)
        }
    }
}
