import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO
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
        var lines = ["id,alarmId,scheduledDate,completedAt,status,userId,userDisplayName,onTime,note"]
        for c in all {
            lines.append([c.id, c.alarmId, ISOTime.format(c.scheduledDate), ISOTime.format(c.completedAt), c.status,
                          c.userId ?? "", c.userDisplayName ?? "", c.onTime ? "true" : "false", c.note ?? ""]
                .map(Self.csvField).joined(separator: ","))
        }
        return TextDocument(contentType: "text/csv; charset=utf-8", filename: "completions-\(q.alarmId).csv",
                            body: lines.joined(separator: "\r\n") + "\r\n")
    }

    /// RFC 4180 quoting; a leading =, +, - or @ is prefixed with ' so spreadsheets do not run it.
    static func csvField(_ value: String) -> String {
        var v = value
        if let first = v.first, "=+-@".contains(first) { v = "'" + v }
        guard v.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return v }
        return "\"" + v.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    func calendar(alarmId: String?, actor: String) async throws -> TextDocument {
        let alarms: [Alarm]
        if let id = alarmId {
            guard let a = try await store.load(id), a.isVisible(to: actor), a.deletedAt == nil else { throw AlarmHandlers.notFound(id) }
            alarms = [a]
        } else {
            alarms = try await AlarmRow.decodeAll(store.database.query("""
                SELECT \(unescaped: AlarmRow.columns) FROM alarms
                WHERE deleted_at IS NULL AND is_active AND (owner_id = \(actor) OR \(actor) = ANY(shared_with))
                ORDER BY next_fire_date NULLS LAST, id LIMIT 5000
                """))
        }
        return TextDocument(contentType: "text/calendar; charset=utf-8",
                            filename: alarmId.map { "alarm-\($0).ics" } ?? "chronir.ics", body: Self.ics(alarms))
    }

    /// A VCALENDAR with one recurring VEVENT per alarm and the VTIMEZONEs they use.
    static func ics(_ alarms: [Alarm], now: Date = Date()) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Chronir//Chronir backend//EN", "CALSCALE:GREGORIAN",
                     "X-WR-CALNAME:Chronir"]
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
            if let note = a.note, !note.isEmpty { events.append("DESCRIPTION:\(ICalendar.escape(note))") }
            if let category = a.category, !category.isEmpty { events.append("CATEGORIES:\(ICalendar.escape(category))") }
            events += ["STATUS:CONFIRMED", "SEQUENCE:\(a.version)", "LAST-MODIFIED:\(ICalendar.utcStamp(a.updatedAt))",
                       "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:\(ICalendar.escape(a.title))", "TRIGGER:PT0M", "END:VALARM",
                       "END:VEVENT"]
        }
        for (_, (zone, first)) in zones.sorted(by: { $0.key < $1.key }) {
            lines += ICalendar.vtimezone(zone, from: first.addingTimeInterval(-86_400 * 366), to: now.addingTimeInterval(86_400 * 366 * 15))
        }
        lines += events
        lines.append("END:VCALENDAR")
        return lines.map(ICalendar.fold).joined(separator: "\r\n") + "\r\n"
    }
}
