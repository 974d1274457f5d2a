import ArgumentParser
import Foundation
import Messaging
import ServiceKit

/// `chronirctl health`: asks every service over ZeroMQ and prints a table; exit 1 when one is down.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask every service for its health over ZeroMQ (endpoints from CHRONIR_<SERVICE>_RPC)."
    )

    @Option(help: "Seconds to wait for each service.")
    var timeout: Double = 2

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    struct Row: Codable {
        var service: String
        var status: String
        var instance: String
        var version: String
        var uptime: String
        var detail: String
    }

    func run() async throws {
        let rows = try await ServiceCall.everyService(timeout: .milliseconds(Int64(timeout * 1000))) { name, client in
            do {
                let r = try await client.call(SystemMethods.Health.self, Empty())
                let failing = r.checks.filter { $0.value != "ok" }.map { "\($0.key): \($0.value)" }.sorted()
                return Row(service: name.rawValue, status: r.status, instance: r.instance, version: r.version,
                           uptime: String(format: "%.0fs", r.uptimeSeconds),
                           detail: failing.isEmpty ? "ready" : failing.joined(separator: "; "))
            } catch {
                return Row(service: name.rawValue, status: "down", instance: "-", version: "-", uptime: "-", detail: "\(error)")
            }
        }
        if json {
            print(String(decoding: try JSONCoding.encode(rows), as: UTF8.self))
        } else {
            print(Table.render(header: ["SERVICE", "STATUS", "INSTANCE", "VERSION", "UPTIME", "DETAIL"],
                               rows: rows.map { [$0.service, $0.status, $0.instance, $0.version, $0.uptime, $0.detail] }))
        }
        if rows.contains(where: { $0.status != "ok" }) { throw ExitCode(1) }
    }
}
