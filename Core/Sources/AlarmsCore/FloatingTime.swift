import Contracts
import Foundation
import Schedules
import Wire

/// Alarms that follow their owner's zones (US-7.3). A floating schedule (`floating: true`)
/// keeps its wall-clock time in the owner's current zone — that of their most recently active
/// device, or of their profile when they change it. A fixed one keeps its zone, except that
/// fixed alarms in the owner's home zone follow the home zone when the owner moves it ("always
/// fires at home time").
public enum FloatingTime {
    /// `alarm` moved to `zone` at `now`: the schedule takes the zone, and a pending occurrence
    /// that has not rung yet keeps its local date and time there — never a day skipped or
    /// rung twice when the traveller crosses the date line (Manila → New York: Monday 07:00
    /// stays Monday 07:00). When that instant has already passed in the new zone (a flight
    /// east), it is due at once rather than lost. An occurrence that already rang keeps its
    /// instant. An alarm already in `zone`, or `zone` unknown, comes back unchanged.
    public static func moved(_ alarm: Alarm, to zone: String, now: Date) throws -> Alarm {
        guard alarm.schedule.timezone != zone, let to = TimeZone(identifier: zone) else { return alarm }
        var n = alarm
        n.schedule.timezone = zone
        guard alarm.deletedAt == nil, let pending = alarm.nextFireDate, pending > now,
              let from = TimeZone(identifier: alarm.schedule.timezone) else { return n }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = from
        let local = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: pending)
        calendar.timeZone = to
        let compiled = try AlarmRules.compile(n.schedule)
        if let same = calendar.date(from: local), compiled.isOccurrence(same) {
            n.nextFireDate = same
        } else {
            // No such local time there (a daylight-saving gap): the schedule's next one.
            n.nextFireDate = compiled.next(after: now)
            if n.nextFireDate == nil { n.isActive = false }
        }
        return n
    }
}
