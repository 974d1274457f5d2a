import AlarmsCore
import Contracts
import Foundation
import Messaging
import Schedules

/// CSV export of completion history and iCalendar feeds of alarms.
struct ExportHandlers: Sendable {
    let store: AlarmStore
    let completions: CompletionQueries

    func register(into router: inout RPCRouter) {
        router.on(AlarmsMethods.CompletionsCSV.self) { q, ctx in try await csv(q, actor: try ctx.requireActor()) }
        router.on(AlarmsMethods.Calendar.self) { q, ctx in try await calendar(alarmId: q.alarmId, actor: try ctx.requireActor()) }
    }

    func csv(_ q: CompletionQuery, actor: String) async throws -> TextDocument {
        var all: [Completion] = []
        var query = q
        query.limit = 500
        repeat {
            let page = try await completions.history(query, actor: actor)
            all += page.completions
            query.cursor = page.nextCursor
        } while query.cursor != nil && all.count < 100_000
        var lines = ["id,alarmId,scheduledDate,completedAt,status,userId,userDisplayName,onTime,note,snoozeCount"]
        for c in all {
            lines.append([c.id, c.alarmId, ISOTime.format(c.scheduledDate), ISOTime.format(c.completedAt), c.status.rawValue,
                          c.userId ?? "", c.userDisplayName ?? "", c.onTime ? "true" : "false", c.note ?? "",
                          String(c.snoozeCount)]
                .map(CSVField.escape).joined(separator: ","))
        }
        return TextDocument(contentType: "text/csv; charset=utf-8", filename: "completions-\(q.alarmId).csv",
                            body: lines.joined(separator: "\r\n") + "\r\n")
    }

    func calendar(alarmId: String?, actor: String) async throws -> TextDocument {
        let alarms: [Alarm]
        if let id = alarmId {
            guard let a = try await store.load(id), a.isVisible(to: actor), a.deletedAt == nil else { throw AlarmHandlers.notFound(id) }
            alarms = [a]
        } else {
            alarms = try await store.activeAlarms(visibleTo: actor)
        }
        return TextDocument(contentType: "text/calendar; charset=utf-8",
                            filename: alarmId.map { "alarm-\($0).ics" } ?? "chronir.ics", body: Self.ics(alarms))
    }

    /// What a subscribed feed adds to a calendar: a refresh interval, a VALARM per pre-alarm
    /// warning (minutes before), and who each alarm is assigned to.
    struct FeedOptions {
        var warnings: (Alarm) -> [Int]
        var assignee: (Alarm) -> String?
    }

    /// A VCALENDAR with one recurring VEVENT per alarm and the VTIMEZONEs they use.
    static func ics(_ alarms: [Alarm], now: Date = Date(), feed: FeedOptions? = nil) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Chronir//Chronir backend//EN", "CALSCALE:GREGORIAN",
                     "X-WR-CALNAME:Chronir"]
        if feed != nil { lines += ["REFRESH-INTERVAL;VALUE=DURATION:PT1H", "X-PUBLISHED-TTL:PT1H"] }
        var events: [String] = []
        var zones: [String: (TimeZone, Date)] = [:]
        for a in alarms {
            guard let compiled = try? a.schedule.compile(), let rule = compiled.rrule, let first = compiled.first else { continue }
            let zone = compiled.timeZone
            if let known = zones[zone.identifier] {
                zones[zone.identifier] = (zone, min(known.1, first))
            } else {
                zones[zone.identifier] = (zone, first)
            }
            events += ["BEGIN:VEVENT", "UID:\(a.id)@chronir.app", "DTSTAMP:\(ICalendar.utcStamp(now))", rule.dtstart,
                       rule.rrule, "DURATION:PT15M", "SUMMARY:\(ICalendar.escape(a.title))"]
            let assignee = feed?.assignee(a)
            let description = [a.note.flatMap { $0.isEmpty ? nil : $0 }, assignee.map { "Assigned to \($0)" }].compactMap { $0 }
            if !description.isEmpty { events.append("DESCRIPTION:\(ICalendar.escape(description.joined(separator: "\n")))") }
            if let assignee { events.append("X-CHRONIR-ASSIGNEE:\(ICalendar.escape(assignee))") }
            if let category = a.category, !category.isEmpty { events.append("CATEGORIES:\(ICalendar.escape(category))") }
            events += ["STATUS:CONFIRMED", "SEQUENCE:\(a.version)", "LAST-MODIFIED:\(ICalendar.utcStamp(a.updatedAt))",
                       "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:\(ICalendar.escape(a.title))", "TRIGGER:PT0M", "END:VALARM"]
            for minutes in feed?.warnings(a) ?? [] where minutes > 0 {
                events += ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:\(ICalendar.escape(a.title)) (in \(Self.span(minutes)))",
                           "TRIGGER:-PT\(minutes)M", "END:VALARM"]
            }
            events.append("END:VEVENT")
        }
        for (_, (zone, first)) in zones.sorted(by: { $0.key < $1.key }) {
            lines += ICalendar.vtimezone(zone, from: first.addingTimeInterval(-86_400 * 366), to: now.addingTimeInterval(86_400 * 366 * 15))
        }
        lines += events
        lines.append("END:VCALENDAR")
        return lines.map(ICalendar.fold).joined(separator: "\r\n") + "\r\n"
    }

    /// `3 days`, `1 hour`, `90 minutes`.
    static func span(_ minutes: Int) -> String {
        if minutes % 1440 == 0 { return minutes == 1440 ? "1 day" : "\(minutes / 1440) days" }
        if minutes % 60 == 0 { return minutes == 60 ? "1 hour" : "\(minutes / 60) hours" }
        return "\(minutes) minutes"
    }
}
