import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

/// A Server-Sent Events client for tests: connects, parses events into a list, and can be
/// disconnected to test resumption.
final class SSEClient: Sendable {
    struct Event: Sendable, Equatable {
        var id: String?
        var event: String?
        var data: String
        /// When the event's closing blank line arrived.
        var receivedAt = Date.distantPast
    }

    let events = Mutex<[Event]>([])
    let connected = Mutex(false)
    /// The comment lines received (`: ping`, `: resync`, …), without the colon.
    let comments = Mutex<[String]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(http: HTTPClient, url: String, token: String, lastEventId: String? = nil) {
        let t = Task {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Accept", value: "text/event-stream")
            if let lastEventId { request.headers.add(name: "Last-Event-ID", value: lastEventId) }
            do {
                let response = try await http.execute(request, timeout: .hours(1))
                var pending = ""
                var current = Event(id: nil, event: nil, data: "")
                for try await chunk in response.body {
                    pending += String(buffer: chunk)
                    while let nl = pending.firstIndex(of: "\n") {
                        let line = String(pending[..<nl])
                        pending = String(pending[pending.index(after: nl)...])
                        if line.isEmpty {
                            if !current.data.isEmpty || current.id != nil {
                                var e = current
                                e.receivedAt = Date()
                                events.withLock { $0.append(e) }
                            }
                            current = Event(id: nil, event: nil, data: "")
                        } else if line.hasPrefix(":") {
                            if line.hasPrefix(": connected") { connected.withLock { $0 = true } }
                            comments.withLock { $0.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces)) }
                        } else if line.hasPrefix("id: ") {
                            current.id = String(line.dropFirst(4))
                        } else if line.hasPrefix("event: ") {
                            current.event = String(line.dropFirst(7))
                        } else if line.hasPrefix("data: ") {
                            current.data += String(line.dropFirst(6))
                        }
                    }
                }
            } catch {}
        }
        task.withLock { $0 = t }
    }

    func close() async {
        let t = task.withLock { $0 }
        t?.cancel()
        await t?.value
    }

    var ids: [String] { events.withLock { $0.compactMap(\.id) } }
}
