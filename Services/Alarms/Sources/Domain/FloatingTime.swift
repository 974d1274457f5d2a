import Contracts
import Foundation
import Schedules
import Wire

/// Floating alarms (US-7.3): a schedule with `floating: true` keeps its wall-clock time in the
/// owner's current zone — that of their most recently active device, or of their profile when
/// they change it — and is re-planned when that zone changes. Fixed schedules keep their zone.
enum FloatingTime {
    /// `alarm` moved to `zone` at `now`: a floating alarm takes the zone; its pending
    /// occurrence, when it has not come yet, becomes the schedule's next one in the new zone (an
    /// occurrence that already fired and awaits its mark stays). Fixed alarms, and floating ones
    /// already in `zone`, come back unchanged.
    static func moved(_ alarm: Alarm, to zone: String, now: Date) throws -> Alarm {
        guard alarm.schedule.floating == true, alarm.schedule.timezone != zone, TimeZone(identifier: zone) != nil else { return alarm }
        var n = alarm
        n.schedule.timezone = zone
        if let pending = alarm.nextFireDate, pending > now, alarm.deletedAt == nil {
            n.nextFireDate = try AlarmRules.compile(n.schedule).next(after: now)
            if n.nextFireDate == nil { n.isActive = false }
        }
        return n
    }
}
