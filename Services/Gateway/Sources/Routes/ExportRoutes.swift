import Contracts
import Foundation
import Hummingbird
import Messaging

/// `GET /v1/me/export`: everything the account owns, from every service, as one JSON document
/// streamed page by page (a service answers one section's next rows per request), so neither
/// the gateway nor a service holds the whole of it.
enum ExportRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway, writeTimeout: Duration = .seconds(60)) {
        router.get("/v1/me/export") { request, context in
            let caller = try await g.caller(request)
            try await g.throttle.admitExport(user: caller.uid)
            let sources: [(RPCClient, any RPCMethod.Type)] = [
                (g.clients.accounts, ExportMethods.Accounts.self), (g.clients.alarms, ExportMethods.Alarms.self),
                (g.clients.invitations, ExportMethods.Invitations.self), (g.clients.notifications, ExportMethods.Notifications.self),
                (g.clients.billing, ExportMethods.Billing.self),
            ]
            @Sendable func page(_ source: (RPCClient, any RPCMethod.Type), after: String?) async throws -> ExportPage {
                let reply = try await g.call(source.1, source.0, payload: try JSONCoding.encode(ExportRequest(after: after)), caller: caller)
                return try JSONCoding.decode(ExportPage.self, from: reply)
            }
            // Every service's first page before the answer starts: one that cannot answer makes
            // the export an error status, not a cut document.
            var first: [ExportPage] = []
            for source in sources { first.append(try await page(source, after: nil)) }
            let head = try JSONCoding.encode(["uid": caller.uid, "exportedAt": ISOTime.format(Date())])
            // A client that stops reading is cut after `writeTimeout` (``WriteProgress``).
            let body = ResponseBody.watched(channel: context.channel, limit: writeTimeout, telemetry: g.telemetry, route: "/v1/me/export") { [first] writer in
                // The head object without its closing brace; sections follow as `"name":[…]`.
                try await writer.write(ByteBuffer(bytes: head.dropLast()))
                for (source, start) in zip(sources, first) {
                    var current: ExportPage? = start
                    var open: String?
                    var count = 0
                    while let p = current {
                        if p.section != open {
                            if open != nil { try await writer.write(ByteBuffer(string: "]")) }
                            try await writer.write(ByteBuffer(string: ",\(String(decoding: try JSONCoding.encode(p.section), as: UTF8.self)):["))
                            open = p.section
                            count = 0
                        }
                        for item in p.items {
                            var chunk = count == 0 ? Data() : Data(",".utf8)
                            chunk.append(try JSONCoding.encode(item))
                            try await writer.write(ByteBuffer(bytes: chunk))
                            count += 1
                        }
                        if let next = p.next { current = try await page(source, after: next) } else { current = nil }
                    }
                    if open != nil { try await writer.write(ByteBuffer(string: "]")) }
                }
                try await writer.write(ByteBuffer(string: "}"))
                try await writer.finish(nil)
            }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.contentDisposition] = "attachment; filename=\"chronir-export.json\""
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: body)
        }
    }
}
