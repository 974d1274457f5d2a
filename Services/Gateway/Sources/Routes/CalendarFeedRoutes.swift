import Contracts
import Foundation
import Hummingbird
import Messaging

/// `/v1/me/calendar-feeds` (manage) and `/cal/<token>.ics` (the feed itself, no bearer token:
/// the 128-bit token in the URL is the credential).
enum CalendarFeedRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway, publicURL: String?) {
        /// The feed's URLs on this server (`CHRONIR_PUBLIC_URL`, else the request's host).
        @Sendable func urls(_ token: String, _ request: Request) -> (String, String) {
            let base = publicURL ?? "http://\(request.head.authority ?? "localhost")"
            let https = base.hasPrefix("https://")
            let host = base.replacingOccurrences(of: https ? "https://" : "http://", with: "")
            return ("\(base)/cal/\(token).ics", "webcal://\(host)/cal/\(token).ics")
        }
        @Sendable func json(_ feed: CalendarFeed, _ request: Request) -> JSONValue {
            var object: [String: JSONValue] = [
                "id": .string(feed.id), "scope": .string(feed.scope), "groupId": feed.groupId.map(JSONValue.string) ?? .null,
                "createdAt": .string(ISOTime.format(feed.createdAt)), "lastFetchedAt": feed.lastFetchedAt.map { .string(ISOTime.format($0)) } ?? .null,
            ]
            if let token = feed.token {
                let (url, webcal) = urls(token, request)
                object["url"] = .string(url)
                object["webcalURL"] = .string(webcal)
            }
            return .object(object)
        }
        router.post("/v1/me/calendar-feeds") { request, _ in
            let caller = try await g.caller(request)
            let reply = try await g.call(CalendarFeedMethods.Create.self, g.clients.alarms, payload: try await HTTPSupport.payload(request), caller: caller)
            return try HTTPSupport.json(json(try JSONCoding.decode(CalendarFeed.self, from: reply), request), status: .created)
        }
        router.get("/v1/me/calendar-feeds") { request, _ in
            let caller = try await g.caller(request)
            let reply = try await g.call(CalendarFeedMethods.List.self, g.clients.alarms, payload: Data("{}".utf8), caller: caller)
            let list = try JSONCoding.decode(CalendarFeedList.self, from: reply)
            return try HTTPSupport.json(JSONValue.object(["feeds": .array(list.feeds.map { json($0, request) })]))
        }
        router.delete("/v1/me/calendar-feeds/:id") { request, context in
            let caller = try await g.caller(request)
            let payload = try JSONCoding.encode(CalendarFeedRef(id: try context.parameters.require("id")))
            return try await g.forward(CalendarFeedMethods.Delete.self, g.clients.alarms, payload: payload, caller: caller, status: .noContent)
        }
        router.get("/cal/:file") { request, context in
            let file = try context.parameters.require("file")
            guard file.hasSuffix(".ics") else { throw ServiceError(.notFound, "no such calendar feed") }
            let payload = try JSONCoding.encode(CalendarFeedFetch(token: String(file.dropLast(4))))
            let doc = try JSONCoding.decode(CalendarFeedDocument.self,
                                            from: try await g.call(CalendarFeedMethods.Fetch.self, g.clients.alarms, payload: payload, caller: nil))
            var headers: HTTPFields = [.eTag: doc.etag, .cacheControl: "private, max-age=300"]
            if let seen = request.headers[.ifNoneMatch], seen.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == doc.etag }) {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentType] = "text/calendar; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: doc.body)))
        }
    }
}
