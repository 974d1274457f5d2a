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
        subcommands: [Generate.self, RotateJWT.self, RotateBus.self, Reload.self]
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

    struct RotateBus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-bus",
            abstract: "Rotate a principal's bus key pair in a key directory: a new secret key, the new public key listed first and the old one after it (accepted until --finish). Then run `chronirctl keys reload`.")

        @Option(help: "The key directory (CHRONIR_BUS_KEYS of the services).")
        var dir: String

        @Option(help: "The principal whose key pair is rotated (a service, gateway or operator).")
        var principal: String

        @Flag(help: "End the rotation: keep only the current key in the public key file.")
        var finish = false

        func run() async throws {
            guard BusKeys.principals.contains(principal) else {
                throw ValidationError("unknown principal \(principal); one of \(BusKeys.principals.joined(separator: ", "))")
            }
            do {
                if finish {
                    let removed = try KeyFile.finishRotation(in: dir, principal: principal)
                    print(removed.isEmpty ? "\(principal) lists one key: nothing to finish"
                          : "\(principal): \(removed.count) old key(s) removed from \(KeyFile.publicPath(dir, principal)); run `chronirctl keys reload`")
                } else {
                    let key = try KeyFile.rotate(in: dir, principal: principal)
                    print("\(principal): new key \(key.prefix(8))… written; run `chronirctl keys reload` (and SIGHUP the gateway), then `chronirctl keys rotate-bus --dir \(dir) --principal \(principal) --finish` and reload again (docs/operations.md § Rotating a bus key)")
                }
            } catch {
                throw CommandFailure("\(error)")
            }
        }
    }

    struct Reload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make every service replica read its bus key files again (as SIGHUP does): a service whose key is being rotated first, the others after it."
        )

        @Option(help: "Seconds to wait for each service.")
        var timeout: Double = 3

        @Option(help: "Only these services (comma-separated); default: all.")
        var services: String?

        func run() async throws {
            var names = ServiceDirectory.Name.allCases
            if let services {
                names = try services.split(separator: ",").map { raw in
                    guard let name = ServiceDirectory.Name(rawValue: String(raw)) else { throw ValidationError("unknown service \(raw)") }
                    return name
                }
            }
            let outcomes: [BusKeyReload.Outcome]
            do {
                outcomes = try await BusKeyReload.run(environment: ServiceEnvironment(ServiceCall.operatorEnvironment()), services: names,
                                                      timeout: .milliseconds(Int64(timeout * 1000)))
            } catch {
                throw CommandFailure("\(error)")
            }
            print(Table.render(header: ["SERVICE", "RESULT"], rows: outcomes.map { [$0.target, $0.detail] }))
            let failed = outcomes.filter { !$0.reloaded }.map(\.target)
            if !failed.isEmpty { throw CommandFailure("not reloaded: \(failed.joined(separator: ", "))") }
            print("the gateway, and the replicas a reload did not reach (a service scaled behind one name), read their keys on SIGHUP: docker compose -f deploy/compose.yaml kill -s HUP gateway accounts alarms scheduler notifications invitations billing")
        }
    }
}
