import ArgumentParser
import Contracts
import Foundation
import Messaging
import ServiceKit

/// `chronirctl analytics [--days 30] [--json]`: daily active users, retention by signup cohort,
/// conversion through the tiers and feature usage, from the alarms service's analytics.
struct AnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Product analytics: active users, retention, conversion, feature usage (operators)."
    )

    @Option(help: "Days to cover, ending today (UTC).")
    var days = 30

    @Flag(help: "Print the report as JSON.")
    var json = false

    func run() async throws {
        let report = try await ServiceCall.with(.alarms) { client in
            try await client.call(AnalyticsMethods.Report.self, .init(days: days))
        }
        if json {
            print(String(decoding: try JSONCoding.encode(report), as: UTF8.self))
            return
        }
        print(Self.render(report))
    }

    static func percent(_ v: Double?) -> String { v.map { String(format: "%.1f %%", $0 * 100) } ?? "—" }

    static func render(_ r: AnalyticsReport) -> String {
        var out = ["Analytics \(r.from) – \(r.to) (UTC)", "", "Daily active users"]
        out.append(Table.render(header: ["day", "active"], rows: r.dailyActiveUsers.map { [$0.day, String($0.activeUsers)] }))
        out += ["", "Retention by signup day"]
        out.append(Table.render(header: ["cohort", "users", "D1", "D7", "D30"],
                                rows: r.retention.map { [$0.day, String($0.users), percent($0.d1), percent($0.d7), percent($0.d30)] }))
        let c = r.conversion
        out += ["", "Conversion (signups in the window)"]
        out.append(Table.render(header: ["signups", "reached Plus", "reached Premium", "Free → Plus", "Plus → Premium"],
                                rows: [[String(c.signups), String(c.reachedPlus), String(c.reachedPremium), percent(c.freeToPlus), percent(c.plusToPremium)]]))
        out += ["", "Feature usage"]
        out.append(Table.render(header: ["event", "count", "users"], rows: r.usage.map { [$0.event, String($0.count), String($0.users)] }))
        return out.joined(separator: "\n")
    }
}
