import ArgumentParser
import Foundation
import Messaging
import ServiceKit
import ZMQ

/// `chronirctl keys generate --dir .run/keys`: the CurveZMQ key pairs of the bus, one per
/// principal (each service, the gateway, the operator); existing keys are kept.
/// `chronirctl keys rotate-jwt`: a new access-token signing key (``RotateJWT``).
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage the CurveZMQ keys of the internal bus and the access-token signing key.",
        subcommands: [Generate.self, RotateJWT.self, Reload.self]
    )

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write public/<principal>.pub and secret/<principal>.key for every principal that has none.")

        @Option(help: "The key directory (CHRONIR_BUS_KEYS of the services).")
        var dir: String

        @Option(help: "Principals (comma-separated); default: every service, gateway and operator.")
        var principals: String?

        func run() async throws {
            let names = principals.map { $0.split(separator: ",").map { String($0) } } ?? BusKeys.principals
            let created = try KeyFile.generate(in: dir, principals: names)
            print(created.isEmpty ? "keys in \(dir) are complete" : "generated keys for \(created.joined(separator: ", ")) in \(dir)")
        }
    }

    struct Reload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make every service read its bus key files again (as SIGHUP does): the keys listed now are accepted from the next connection on."
        )

        @Option(help: "Seconds to wait for each service.")
        var timeout: Double = 3

        func run() async throws {
            let rows = try await ServiceCall.everyService(timeout: .milliseconds(Int64(timeout * 1000))) { name, client in
                do {
                    let r = try await client.call(SystemMethods.ReloadBusKeys.self, Empty())
                    return (name.rawValue, true, "reloaded: \(r.trusted)")
                } catch {
                    return (name.rawValue, false, "\(error)")
                }
            }
            print(Table.render(header: ["SERVICE", "RESULT"], rows: rows.map { [$0.0, $0.2] }))
            let failed = rows.filter { !$0.1 }.map(\.0)
            if !failed.isEmpty { throw CommandFailure("not reloaded: \(failed.joined(separator: ", "))") }
        }
    }
}
