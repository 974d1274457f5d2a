import Contracts
import Foundation
import Hummingbird
import Messaging
import NIOCore

/// `/v1/me/notifications` (the inbox) and `/v1/me/events` (the live stream, Server-Sent Events).
enum NotificationRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway, hub: LiveHub, writeTimeout: Duration = .seconds(60)) {
        router.get("/v1/me/notifications") { request, _ in
            let caller = try await g.caller(request)
            let q = request.uri.queryParameters
            let query = NotificationsMethods.Inbox.Request(since: try cursor(q.get("since")), limit: try limit(q.get("limit")))
            return try await g.forward(NotificationsMethods.Inbox.self, g.clients.notifications, payload: try JSONCoding.encode(query), caller: caller)
        }
        router.post("/v1/me/notifications/:id/ack") { request, context in
            let caller = try await g.caller(request)
            guard let id = Int64(try context.parameters.require("id")) else {
                throw ServiceError(.notFound, "no such notification")
            }
            return try await g.forward(NotificationsMethods.Ack.self, g.clients.notifications,
                                       payload: try JSONCoding.encode(NotificationsMethods.Ack.Request(id: id)), caller: caller)
        }
        router.get("/v1/me/events") { request, context in
            let caller = try await g.caller(request)
            // Both forms are checked; the header wins when both are given.
            let header = try cursor(request.headers[.init("Last-Event-ID")!])
            let query = try cursor(request.uri.queryParameters.get("lastEventId"))
            let last = header ?? query
            guard let connection = hub.open(user: caller.uid, session: caller.session, expires: caller.expiresAt) else {
                // Streams of a client that left unseen end at the next ping (CHRONIR_SSE_PING).
                throw ServiceError.rateLimited("this account has \(hub.perUser) live streams open already", retryAfter: liveRetryAfterSeconds)
            }
            return events(g, connection: connection, caller: caller, after: last, writeDelay: hub.writeDelay,
                          channel: context.channel, writeTimeout: writeTimeout)
        }
    }

    /// What a refused live stream is told to wait (`Retry-After`).
    static let liveRetryAfterSeconds = 30

    static func cursor(_ text: String?) throws -> Int64? {
        guard let text, !text.isEmpty else { return nil }
        guard let v = Int64(text), v >= 0 else { throw ServiceError(.validationFailed, "a cursor is a non-negative integer from an earlier answer") }
        return v
    }

    static func limit(_ text: String?) throws -> Int? {
        guard let text else { return nil }
        guard let v = Int(text) else { throw ServiceError(.validationFailed, "limit must be an integer") }
        return v
    }

    /// Writes the caller's inbox after `since`, page by page, skipping ids not above `last`
    /// (unless nothing was sent yet), and moves `last` on.
    static func catchUp(_ g: Gateway, caller: Caller, since: Int64, last: inout Int64, writer: inout any ResponseBodyWriter) async throws {
        var since = since
        var more = true
        while more {
            let page = try await g.clients.notifications.call(
                NotificationsMethods.Inbox.self, .init(since: since, limit: 500, silent: true), actor: caller.uid, headers: caller.headers)
            var out = ByteBuffer()
            for n in page.notifications where last == Int64.max || n.id > last {
                var bytes = try frame(n)
                out.writeBuffer(&bytes)
                last = n.id
            }
            if out.readableBytes > 0 { try await writer.write(out) }
            since = page.notifications.last?.id ?? since
            more = page.hasMore && !page.notifications.isEmpty
        }
    }

    /// One SSE event: `id` is the inbox id, so `Last-Event-ID` resumes exactly after it.
    static func frame(_ n: InboxNotification) throws -> ByteBuffer {
        frame(id: n.id, type: n.type, json: try JSONCoding.encode(n))
    }

    /// The SSE frame of a notification already in JSON (one line: JSON escapes line breaks in
    /// strings, and neither the encoder nor PostgreSQL's jsonb output breaks lines between values).
    static func frame(id: Int64, type: String, json: Data) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(json.count + type.utf8.count + 40)
        buffer.writeString("id: \(id)\nevent: \(type)\ndata: ")
        buffer.writeBytes(json)
        buffer.writeString("\n\n")
        return buffer
    }

    /// Registered first (`connection`, counted toward the account's cap before the answer), then
    /// sends what the inbox holds after `after` (when resuming), then the live notifications,
    /// skipping any already sent: no gap, no duplicate. When the connection's buffer was full
    /// (a client slower than its notifications), what it refused is read from the inbox after
    /// the last id sent, and a `: resync` comment marks the place.
    ///
    /// A client that stops reading is cut after `writeTimeout` without a completed write (the
    /// pings write every `CHRONIR_SSE_PING`): ``WriteProgress``.
    static func events(_ g: Gateway, connection: LiveConnection, caller: Caller, after: Int64?, writeDelay: Duration = .zero,
                       channel: any Channel, writeTimeout: Duration) -> Response {
        let body = ResponseBody.watched(channel: channel, limit: writeTimeout, telemetry: g.telemetry, route: "/v1/me/events") { writer in
            defer { connection.close() }
            try await writer.write(ByteBuffer(string: "retry: 3000\n: connected\n\n"))
            var last = after ?? Int64.max
            if let after { try await catchUp(g, caller: caller, since: after, last: &last, writer: &writer) }
            for await item in connection.stream {
                if writeDelay > .zero { try await Task.sleep(for: writeDelay) }
                switch item {
                case .notifications(let frames):
                    var out = ByteBuffer()
                    for f in frames where last == Int64.max || f.id > last {
                        var bytes = f.bytes
                        out.writeBuffer(&bytes)
                        last = f.id
                    }
                    if out.readableBytes > 0 { try await writer.write(out) }
                case .ping:
                    try await writer.write(ByteBuffer(string: ": ping\n\n"))
                }
                // Everything refused is newer than everything held, so the inbox is read once
                // what was held before the refusal has gone out, i.e. now.
                if let dropped = connection.takeDropped() {
                    g.telemetry.counter("chronir_gateway_live_resyncs_total").increment()
                    try await writer.write(ByteBuffer(string: ": resync\n\n"))
                    // Nothing sent yet: from the oldest the buffer took, which it may still hold.
                    let since = last == Int64.max ? min(connection.firstAccepted ?? dropped, dropped) - 1 : last
                    let before = last
                    try await catchUp(g, caller: caller, since: since, last: &last, writer: &writer)
                    g.telemetry.logger.notice("live stream: resynced from the inbox after a full buffer", metadata: [
                        "user": "\(caller.uid)", "since": "\(since)", "refusedFrom": "\(dropped)",
                        "sentUpTo": "\(last == Int64.max ? "none" : "\(last)")", "movedOn": "\(before != last)",
                    ])
                }
            }
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        headers[.init("X-Accel-Buffering")!] = "no"
        return Response(status: .ok, headers: headers, body: body)
    }
}
