import Contracts
import Foundation
import Hummingbird
import Messaging

/// `/v1/alarms…`: alarms, the delta feed, completions, exports.
enum AlarmRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        addAlarms(to: router, gateway: g)
        addOccurrences(to: router, gateway: g)
    }

    /// The alarms themselves: create, import, list and feed, read, change, delete, members.
    static func addAlarms(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.post("/v1/alarms") { request, _ in
            let caller = try await g.caller(request)
            let reply = try await g.call(AlarmsMethods.Create.self, g.clients.alarms, payload: try await HTTPSupport.payload(request), caller: caller)
            let created = try JSONCoding.decoder().decode(AlarmCreated.self, from: reply)
            return try alarmResponse(created.alarm, status: created.created ? .created : .ok)
        }
        // Migration of a device's local alarms: the import, then `migratedAt` on the profile.
        router.post("/v1/alarms:batchImport") { request, _ in
            let caller = try await g.caller(request)
            try await g.throttle.admitImport(user: caller.uid)
            let reply = try await g.call(AlarmsMethods.BatchImport.self, g.clients.alarms, payload: try await HTTPSupport.payload(request), caller: caller)
            var result = try JSONCoding.decoder().decode(AlarmImportResult.self, from: reply)
            let user = try JSONCoding.decoder().decode(User.self, from: try await g.call(AccountsMethods.MarkMigrated.self, g.clients.accounts,
                                                                                          payload: Data("{}".utf8), caller: caller))
            result.migratedAt = user.migratedAt
            return try HTTPSupport.json(result)
        }
        router.get("/v1/alarms") { request, _ in
            let caller = try await g.caller(request)
            let params = request.uri.queryParameters
            if let since = params.get("since") {
                var feed: [String: JSONValue] = ["since": .string(since)]
                if let limit = try HTTPSupport.int(request, "limit", in: 1...1000) { feed["limit"] = .number(Double(limit)) }
                return try await g.forward(AlarmsMethods.Feed.self, g.clients.alarms, payload: JSONCoding.encode(feed), caller: caller)
            }
            var query: [String: JSONValue] = [:]
            for key in ["scope", "groupId", "when", "type", "q", "cursor"] {
                if let v = params.get(key) { query[key] = .string(v) }
            }
            if let active = params.get("active") {
                guard active == "true" || active == "false" else { throw ServiceError(.validationFailed, "active must be true or false") }
                query["active"] = .bool(active == "true")
            }
            if let limit = try HTTPSupport.int(request, "limit", in: 1...200) { query["limit"] = .number(Double(limit)) }
            return try await g.forward(AlarmsMethods.List.self, g.clients.alarms, payload: JSONCoding.encode(query), caller: caller)
        }
        router.get("/v1/alarms/:id") { request, context in
            let caller = try await g.caller(request)
            let ref = AlarmRef(id: try context.parameters.require("id"))
            let reply = try await g.call(AlarmsMethods.Get.self, g.clients.alarms, payload: JSONCoding.encode(ref), caller: caller)
            return try alarmResponse(try JSONCoding.decoder().decode(Alarm.self, from: reply), status: .ok)
        }
        router.patch("/v1/alarms/:id") { request, context in
            let caller = try await g.caller(request)
            let id = try context.parameters.require("id")
            // An edit of a shared or group alarm sends a silent push to every member's devices.
            try await g.throttle.admitAlarmEdit(user: caller.uid, alarm: id)
            var extra: [String: JSONValue] = ["id": .string(id)]
            if let version = try ifMatch(request) { extra["version"] = .number(Double(version)) }
            let payload = try await HTTPSupport.payload(request, adding: extra)
            let reply = try await g.call(AlarmsMethods.Update.self, g.clients.alarms, payload: payload, caller: caller)
            return try alarmResponse(try JSONCoding.decoder().decode(Alarm.self, from: reply), status: .ok)
        }
        router.delete("/v1/alarms/:id") { request, context in
            let caller = try await g.caller(request)
            let ref = AlarmRef(id: try context.parameters.require("id"), version: try ifMatch(request))
            _ = try await g.call(AlarmsMethods.Delete.self, g.clients.alarms, payload: JSONCoding.encode(ref), caller: caller)
            return Response(status: .noContent)
        }
        // A member leaves a shared alarm (`me`), or its owner takes one off (US-10.1).
        router.delete("/v1/alarms/:id/members/:uid") { request, context in
            let caller = try await g.caller(request)
            let req = AlarmsMethods.RemoveMember.Request(id: try context.parameters.require("id"), userId: try context.parameters.require("uid"))
            _ = try await g.call(AlarmsMethods.RemoveMember.self, g.clients.alarms, payload: JSONCoding.encode(req), caller: caller)
            return Response(status: .noContent)
        }
    }

    /// What happens to an alarm's occurrences: completions (and their CSV), snoozes, sounds,
    /// calendars.
    static func addOccurrences(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.post("/v1/alarms/:id/completions") { request, context in
            let caller = try await g.caller(request)
            // The new log's id, chosen here: an attempt that reached a replica which died
            // before answering is sent again to another one, which finds the log if the first
            // committed it and answers it, instead of marking the next occurrence.
            let completionId = UUIDv7.string()
            let payload = try await HTTPSupport.payload(request, adding: ["alarmId": .string(try context.parameters.require("id")),
                                                                         "completionId": .string(completionId)])
            let reply = try await g.call(AlarmsMethods.Complete.self, g.clients.alarms, payload: payload, caller: caller,
                                         idempotencyKey: completionId, retries: 1)
            // Only `created` is read: the body passes through as the alarms service wrote it.
            let created = try JSONMember.raw("created", in: reply) == Data("true".utf8)
            return HTTPSupport.json(reply, status: created ? .created : .ok)
        }
        router.post("/v1/alarms/:id/snooze") { request, context in
            let caller = try await g.caller(request)
            let payload = try await HTTPSupport.payload(request, adding: ["alarmId": .string(try context.parameters.require("id"))])
            return try await g.forward(AlarmsMethods.Snooze.self, g.clients.alarms, payload: payload, caller: caller)
        }
        router.get("/v1/alarms/:id/snooze") { request, context in
            let caller = try await g.caller(request)
            let ref = AlarmsMethods.SnoozeOptions.Request(alarmId: try context.parameters.require("id"))
            return try await g.forward(AlarmsMethods.SnoozeOptions.self, g.clients.alarms, payload: JSONCoding.encode(ref), caller: caller)
        }
        router.get("/v1/sounds") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(AlarmsMethods.Sounds.self, g.clients.alarms, payload: Data("{}".utf8), caller: caller)
        }
        router.get("/v1/alarms/:id/completions") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(AlarmsMethods.Completions.self, g.clients.alarms,
                                       payload: try completionQuery(request, id: try context.parameters.require("id")), caller: caller)
        }
        router.get("/v1/alarms/:id/completions.csv") { request, context in
            let caller = try await g.caller(request)
            let reply = try await g.call(AlarmsMethods.CompletionsCSV.self, g.clients.alarms,
                                         payload: try completionQuery(request, id: try context.parameters.require("id")), caller: caller)
            return try document(reply)
        }
        // Completions are immutable (§11): changing or deleting one is refused for everyone.
        for method in [HTTPRequest.Method.patch, .delete, .put] {
            router.on("/v1/alarms/:id/completions/:completionId", method: method) { request, context -> Response in
                let caller = try await g.caller(request)
                let ref = AlarmRef(id: try context.parameters.require("id"))
                _ = try await g.call(AlarmsMethods.Get.self, g.clients.alarms, payload: JSONCoding.encode(ref), caller: caller)
                throw ServiceError(.permissionDenied, "completions are immutable")
            }
        }
        router.get("/v1/alarms/:id/calendar.ics") { request, context in
            let caller = try await g.caller(request)
            let payload = try JSONCoding.encode(AlarmsMethods.Calendar.Request(alarmId: try context.parameters.require("id")))
            return try document(try await g.call(AlarmsMethods.Calendar.self, g.clients.alarms, payload: payload, caller: caller))
        }
        router.get("/v1/me/calendar.ics") { request, _ in
            let caller = try await g.caller(request)
            let payload = try JSONCoding.encode(AlarmsMethods.Calendar.Request())
            return try document(try await g.call(AlarmsMethods.Calendar.self, g.clients.alarms, payload: payload, caller: caller))
        }
    }

    /// The alarm with its version as the entity tag.
    static func alarmResponse(_ alarm: Alarm, status: HTTPResponse.Status) throws -> Response {
        HTTPSupport.json(try JSONCoding.encode(alarm), status: status, headers: [.eTag: "\"\(alarm.version)\""])
    }

    /// The version an `If-Match` header asks for (`"3"`, `W/"3"` or `3`).
    static func ifMatch(_ request: Request) throws -> Int? {
        guard let raw = request.headers[.ifMatch] else { return nil }
        let trimmed = raw.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "").trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard let v = Int(trimmed) else { throw ServiceError(.validationFailed, "If-Match must be the alarm's version, e.g. \"3\"") }
        return v
    }

    static func completionQuery(_ request: Request, id: String) throws -> Data {
        let params = request.uri.queryParameters
        var query: [String: JSONValue] = ["alarmId": .string(id)]
        for key in ["userId", "status", "from", "to", "cursor"] {
            if let v = params.get(key) { query[key] = .string(v) }
        }
        if let limit = try HTTPSupport.int(request, "limit", in: 1...500) { query["limit"] = .number(Double(limit)) }
        return try JSONCoding.encode(query)
    }

    static func document(_ reply: Data) throws -> Response {
        let doc = try JSONCoding.decoder().decode(TextDocument.self, from: reply)
        return Response(status: .ok, headers: [.contentType: doc.contentType,
                                               .contentDisposition: "attachment; filename=\"\(doc.filename)\""],
                        body: .init(byteBuffer: .init(string: doc.body)))
    }
}
