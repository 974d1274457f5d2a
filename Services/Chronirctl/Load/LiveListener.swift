import AsyncHTTPClient
import Foundation
import Messaging
import NIOCore
import Synchronization

/// A notification as the live stream carries it (the `data:` of an SSE event).
struct LiveNotification: Decodable, Sendable {
    var id: Int
    var userId: String
    var type: String
    var data: [String: String]
}

/// One user's live stream (`GET /v1/me/events`), like a device: connects, hands each
/// notification to `onNotification`, and reconnects with `Last-Event-ID` when the stream drops,
/// so nothing is missed or repeated by the transport. It asks from the start of the inbox
/// (`Last-Event-ID: 0`) the first time too, so its stream must carry every row of the inbox.
/// With `reconnectEvery` > 0 it also drops the connection itself after a time drawn from
/// 0…2 × that (seeded), as a phone changing networks does.
final class LiveListener: Sendable {
    let user: String
    let reconnectEvery: Double
    let seed: UInt64
    private let connected = Atomic<Bool>(false)
    private let reconnects = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    var isConnected: Bool { connected.load(ordering: .relaxed) }
    var reconnectCount: Int { reconnects.load(ordering: .relaxed) }
    /// Connections this listener dropped itself (`reconnectEvery`).
    var droppedCount: Int { dropped.load(ordering: .relaxed) }

    init(user: String, reconnectEvery: Double = 0, seed: UInt64 = 0) {
        self.user = user
        self.reconnectEvery = reconnectEvery
        self.seed = seed
    }

    /// Streams from the user's gateway (``Gateways``); after a drop it reconnects, to another
    /// gateway when its own failed.
    func start(client: HTTPClient, gateways: Gateways, token: @escaping @Sendable () -> String,
               onNotification: @escaping @Sendable (LiveNotification, Date) -> Void) {
        let t = Task { [self] in
            var lastId: Int?
            var draws = SeededGenerator(seed: seed)
            // The fast decoder: Foundation's took a large share of the generator's CPU in a burst.
            let decoder = JSONCoding.decoder()
            while !Task.isCancelled {
                let base = gateways.base(for: user)
                var request = HTTPClientRequest(url: base + "/v1/me/events")
                request.headers.add(name: "Authorization", value: "Bearer \(token())")
                request.headers.add(name: "Accept", value: "text/event-stream")
                // Resumes after the last id seen, or from the start of the inbox when nothing
                // arrived yet (without a cursor, what was sent meanwhile would be missed).
                request.headers.add(name: "Last-Event-ID", value: String(lastId ?? 0))
                let dropAt = reconnectEvery > 0 ? ContinuousClock.now + .seconds(Double.random(in: 0...(2 * reconnectEvery), using: &draws)) : nil
                do {
                    let response = try await client.execute(request, timeout: .hours(4))
                    // An answer is not a transport failure: the gateway is up (a 503 while it
                    // drains is retried after the pause below, at the same gateway).
                    gateways.answered(base)
                    guard response.status == .ok else { throw LoadFailure("live stream answered \(response.status.code)") }
                    var pending = [UInt8]()
                    var data = [UInt8]()
                    for try await chunk in response.body {
                        // The gateway's keep-alive comments come every few seconds, so this is
                        // checked on a quiet stream too. Frames still in `pending` are read
                        // again after the resume: only ids past `lastId` come back.
                        if let dropAt, ContinuousClock.now >= dropAt { self.dropped.add(1, ordering: .relaxed); break }
                        pending += chunk.readableBytesView
                        var start = 0
                        while let nl = pending[start...].firstIndex(of: 0x0A) {
                            let line = pending[start..<nl]
                            start = nl + 1
                            if line.isEmpty {
                                if !data.isEmpty, let n = try? decoder.decode(LiveNotification.self, from: Data(data)) {
                                    lastId = max(lastId ?? 0, n.id)
                                    onNotification(n, Date())
                                }
                                data.removeAll(keepingCapacity: true)
                            } else if line.starts(with: Array(": connected".utf8)) {
                                self.connected.store(true, ordering: .relaxed)
                            } else if line.starts(with: Array("data: ".utf8)) {
                                data += line.dropFirst(6)
                            }
                        }
                        pending.removeFirst(start)
                    }
                } catch is LoadFailure {
                    if Task.isCancelled { break }
                } catch {
                    if Task.isCancelled { break }
                    gateways.failed(base)
                }
                if Task.isCancelled { break }
                self.connected.store(false, ordering: .relaxed)
                self.reconnects.add(1, ordering: .relaxed)
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        task.withLock { $0 = t }
    }

    func stop() async {
        let t = task.withLock { $0 }
        t?.cancel()
        await t?.value
    }
}

/// A load run that cannot go on.
struct LoadFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A load run that could not set itself up (users, groups, streams, alarms), before anything
/// was measured: `chronirctl load` exits 3, apart from a run that found a loss (1).
struct LoadSetupFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
