import Contracts
import Foundation
import Hummingbird
import Messaging

/// `/v1/invitations`: create, list, look up, accept, decline, revoke (answered by invitations).
enum InvitationRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        let invitations = g.clients.invitations
        @Sendable func code(_ context: GatewayContext) throws -> Data {
            try JSONCoding.encode(InvitationsMethods.Ref(code: try context.parameters.require("code")))
        }
        router.post("/v1/invitations") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(InvitationsMethods.Create.self, invitations, payload: try await HTTPSupport.payload(request), caller: caller,
                                       status: .created)
        }
        router.get("/v1/invitations") { request, _ in
            let caller = try await g.caller(request)
            let role = request.uri.queryParameters.get("role") ?? "invitee"
            return try await g.forward(InvitationsMethods.List.self, invitations,
                                       payload: try JSONCoding.encode(InvitationsMethods.List.Request(role: role)), caller: caller)
        }
        router.get("/v1/invitations/:code") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(InvitationsMethods.Get.self, invitations, payload: try code(context), caller: caller)
        }
        router.post("/v1/invitations/:code/accept") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(InvitationsMethods.Accept.self, invitations, payload: try code(context), caller: caller)
        }
        router.post("/v1/invitations/:code/decline") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(InvitationsMethods.Decline.self, invitations, payload: try code(context), caller: caller)
        }
        router.delete("/v1/invitations/:code") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(InvitationsMethods.Revoke.self, invitations, payload: try code(context), caller: caller)
        }
    }
}
