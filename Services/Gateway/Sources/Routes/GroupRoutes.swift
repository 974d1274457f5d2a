import Contracts
import Hummingbird
import Messaging

/// `/v1/groups`: groups, members, roles, ownership transfer (answered by accounts).
enum GroupRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        let accounts = g.clients.accounts
        @Sendable func ref(_ context: GatewayContext, extra: [String: JSONValue] = [:]) throws -> [String: JSONValue] {
            var o = extra
            o["groupId"] = .string(try context.parameters.require("id"))
            if let uid = context.parameters.get("uid") { o["uid"] = .string(uid) }
            return o
        }
        router.post("/v1/groups") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.Create.self, accounts, payload: try await HTTPSupport.payload(request), caller: caller, status: .created)
        }
        router.get("/v1/groups") { request, _ in
            try await g.forward(GroupMethods.List.self, accounts, caller: try await g.caller(request))
        }
        router.get("/v1/groups/:id") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.Get.self, accounts, payload: try JSONCoding.encode(try ref(context)), caller: caller)
        }
        router.patch("/v1/groups/:id") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.Update.self, accounts, payload: try await HTTPSupport.payload(request, adding: try ref(context)),
                                       caller: caller)
        }
        router.delete("/v1/groups/:id") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.Delete.self, accounts, payload: try JSONCoding.encode(try ref(context)), caller: caller,
                                       status: .noContent)
        }
        router.get("/v1/groups/:id/members") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.Members.self, accounts, payload: try JSONCoding.encode(try ref(context)), caller: caller)
        }
        router.patch("/v1/groups/:id/members/:uid") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.SetRole.self, accounts, payload: try await HTTPSupport.payload(request, adding: try ref(context)),
                                       caller: caller)
        }
        router.delete("/v1/groups/:id/members/:uid") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.RemoveMember.self, accounts, payload: try JSONCoding.encode(try ref(context)), caller: caller,
                                       status: .noContent)
        }
        router.post("/v1/groups/:id/transfer") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(GroupMethods.Transfer.self, accounts, payload: try await HTTPSupport.payload(request, adding: try ref(context)),
                                       caller: caller)
        }
    }
}
