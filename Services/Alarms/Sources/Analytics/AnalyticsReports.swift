import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The operator's report over `analytics_*`: daily active users, retention by signup cohort,
/// conversion through the tiers and feature usage. Days are UTC; a fire is not activity.
struct AnalyticsReports: Sendable {
    let database: Database

    func report(days: Int, today: Date = Date()) async throws -> AnalyticsReport {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let end = calendar.startOfDay(for: today)
        let start = calendar.date(byAdding: .day, value: -(days - 1), to: end)!
        let from = Self.day(start), to = Self.day(end)

        var active: [String: Int] = [:]
        for try await (day, n) in try await database.query("""
            SELECT day::text, count(DISTINCT pseudonym)::int FROM analytics_events
            WHERE day BETWEEN \(from)::date AND \(to)::date AND name <> 'alarm_fired' GROUP BY day
            """).decode((String, Int).self) { active[day] = n }
        let dau = (0..<days).map { k -> AnalyticsReport.Day in
            let d = Self.day(calendar.date(byAdding: .day, value: k, to: start)!)
            return .init(day: d, activeUsers: active[d] ?? 0)
        }

        var cohorts: [String: Int] = [:]
        for try await (day, n) in try await database.query("""
            SELECT signup_day::text, count(*)::int FROM analytics_users WHERE signup_day BETWEEN \(from)::date AND \(to)::date GROUP BY 1
            """).decode((String, Int).self) { cohorts[day] = n }
        var returned: [Int: [String: Int]] = [:]
        for offset in [1, 7, 30] {
            for try await (day, n) in try await database.query("""
                SELECT u.signup_day::text, count(DISTINCT u.pseudonym)::int FROM analytics_users u
                JOIN analytics_events e ON e.pseudonym = u.pseudonym AND e.day = u.signup_day + \(offset)::int AND e.name <> 'alarm_fired'
                WHERE u.signup_day BETWEEN \(from)::date AND \(to)::date GROUP BY 1
                """).decode((String, Int).self) { returned[offset, default: [:]][day] = n }
        }
        let retention = cohorts.keys.sorted().map { day -> AnalyticsReport.Cohort in
            let users = cohorts[day] ?? 0
            func share(_ offset: Int) -> Double? {
                guard let d = Self.parse(day), let due = calendar.date(byAdding: .day, value: offset, to: d), due <= end, users > 0 else { return nil }
                return Double(returned[offset]?[day] ?? 0) / Double(users)
            }
            return .init(day: day, users: users, d1: share(1), d7: share(7), d30: share(30))
        }

        var conversion = AnalyticsReport.Conversion(signups: 0, reachedPlus: 0, reachedPremium: 0, freeToPlus: nil, plusToPremium: nil)
        for try await (signups, plus, premium) in try await database.query("""
            SELECT count(*)::int, count(reached_plus_at)::int, count(reached_premium_at)::int FROM analytics_users
            WHERE signup_day BETWEEN \(from)::date AND \(to)::date
            """).decode((Int, Int, Int).self) {
            conversion = .init(signups: signups, reachedPlus: plus, reachedPremium: premium,
                               freeToPlus: signups > 0 ? Double(plus) / Double(signups) : nil,
                               plusToPremium: plus > 0 ? Double(premium) / Double(plus) : nil)
        }

        var usage: [AnalyticsReport.Usage] = []
        for try await (name, count, users) in try await database.query("""
            SELECT name, count(*)::int, count(DISTINCT pseudonym)::int FROM analytics_events
            WHERE day BETWEEN \(from)::date AND \(to)::date GROUP BY name ORDER BY name
            """).decode((String, Int, Int).self) { usage.append(.init(event: name, count: count, users: users)) }
        return AnalyticsReport(from: from, to: to, dailyActiveUsers: dau, retention: retention, conversion: conversion, usage: usage)
    }

    /// A UTC day as `yyyy-MM-dd`.
    static func day(_ date: Date) -> String { dayFormatter().string(from: date) }

    /// The start (UTC) of a `yyyy-MM-dd` day.
    static func parse(_ day: String) -> Date? { dayFormatter().date(from: day) }

    private static func dayFormatter() -> DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f
    }
}
