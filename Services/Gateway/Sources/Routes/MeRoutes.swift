import Contracts
import Hummingbird
import Messaging

/// `/v1/me` and `/v1/me/devices`: the caller's profile, settings and devices.
enum MeRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.get("/v1/me") { request, _ in
            try await g.forward(AccountsMethods.GetMe.self, g.clients.accounts, caller: try await g.caller(request))
        }
        router.patch("/v1/me") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(AccountsMethods.UpdateMe.self, g.clients.accounts, payload: try await HTTPSupport.payload(request), caller: caller)
        }
        router.delete("/v1/me") { request, _ in
            let caller = try await g.caller(request)
            let response = try await g.forward(AccountsMethods.DeleteMe.self, g.clients.accounts, caller: caller, status: .noContent)
            // Refused here at once; other replicas learn it from the accounts stream.
            g.verifier.signedOut(caller.session)
            return response
        }
        router.get("/v1/me/devices") { request, _ in
            try await g.forward(AccountsMethods.ListDevices.self, g.clients.accounts, caller: try await g.caller(request))
        }
        router.put("/v1/me/devices/:deviceId") { request, context in
            let caller = try await g.caller(request)
            let id = try context.parameters.require("deviceId")
            return try await g.forward(AccountsMethods.PutDevice.self, g.clients.accounts,
                                       payload: try await HTTPSupport.payload(request, adding: ["deviceId": .string(id)]), caller: caller)
        }
        router.delete("/v1/me/devices/:deviceId") { request, context in
            let caller = try await g.caller(request)
            let id = try context.parameters.require("deviceId")
            let payload = try JSONCoding.encode(AccountsMethods.DeleteDevice.Request(deviceId: id))
            return try await g.forward(AccountsMethods.DeleteDevice.self, g.clients.accounts, payload: payload, caller: caller, status: .noContent)
        }
    }
}
