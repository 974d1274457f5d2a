import ArgumentParser
import Contracts
import Foundation
import Messaging

/// `chronirctl notifications tail`: delivery attempts as they happen.
struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Inspect push deliveries.",
        subcommands: [Tail.self, Load.self, SSE.self]
    )

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tail", abstract: "Print delivery attempts (provider, outcome, status, latency) as they happen.")

        @Option(help: "Start with this many recent attempts.")
        var last = 20

        @Flag(help: "Stop after printing what is there (do not follow).")
        var noFollow = false

        @Flag(help: "One JSON object per line.")
        var json = false

        func validate() throws {
            guard last >= 0 else { throw ValidationError("--last must be 0 or more") }
        }

        func run() async throws {
            try await ServiceCall.with(.notifications) { client in
                // The newest `last` attempts first: page to the end, keep the tail.
                var after: Int64 = 0
                var backlog: [NotificationsMethods.Attempts.Attempt] = []
                while true {
                    let page = try await client.call(NotificationsMethods.Attempts.self, .init(after: after, limit: 1000)).attempts
                    backlog.append(contentsOf: page)
                    if backlog.count > last { backlog.removeFirst(backlog.count - last) }
                    guard let end = page.last?.id else { break }
                    after = end
                }
                for a in backlog { print(line(a)) }
                // Nothing recorded yet (`after` still 0: no page had an attempt): say so, on
                // standard error so that the output stays one attempt per line.
                if after == 0 {
                    Self.note(noFollow ? "no delivery attempts yet" : "no delivery attempts yet; waiting for the first one… (Ctrl-C to stop)")
                }
                while !noFollow {
                    let page = try await client.call(NotificationsMethods.Attempts.self, .init(after: after, limit: 1000)).attempts
                    for a in page { print(line(a)) }
                    if let end = page.last?.id { after = end } else { try await Task.sleep(for: .milliseconds(500)) }
                }
            }
        }

        /// A line for the operator on standard error.
        static func note(_ text: String) {
            FileHandle.standardError.write(Data((text + "\n").utf8))
        }

        func line(_ a: NotificationsMethods.Attempts.Attempt) -> String {
            if json { return String(decoding: (try? JSONCoding.encode(a)) ?? Data(), as: UTF8.self) }
            let latency = String(format: "%.1f ms", a.latencyMs)
            return "\(ISOTime.format(a.at))  \(a.provider.padding(toLength: 7, withPad: " ", startingAt: 0)) "
                + "\(a.outcome.padding(toLength: 12, withPad: " ", startingAt: 0)) \(a.status)  try \(a.attempt)  \(latency)  "
                + "user \(a.userId) device \(a.deviceId) event \(a.eventId)" + (a.error.map { "  — \($0)" } ?? "")
        }
    }
}
