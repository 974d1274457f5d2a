import Contracts
import Hummingbird
import Messaging

/// `/v1/me` and `/v1/me/devices`: the caller's profile, settings and devices.
enum MeRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.get("/v1/me") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.GetMe.type, caller: try await g.caller(request))
        }
        router.patch("/v1/me") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(g.clients.accounts, AccountsMethods.UpdateMe.type, payload: try await HTTPSupport.payload(request), caller: caller)
        }
        router.delete("/v1/me") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.DeleteMe.type, caller: try await g.caller(request), status: .noContent)
        }
        router.get("/v1/me/devices") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.ListDevices.type, caller: try await g.caller(request))
        }
        router.put("/v1/me/devices/:deviceId") { request, context in
            let caller = try await g.caller(request)
            let id = try context.parameters.require("deviceId")
            return try await g.forward(g.clients.accounts, AccountsMethods.PutDevice.type,
                                       payload: try await HTTPSupport.payload(request, adding: ["deviceId": .string(id)]), caller: caller)
        }
        router.delete("/v1/me/devices/:deviceId") { request, context in
            let caller = try await g.caller(request)
            let id = try context.parameters.require("deviceId")
            let payload = try JSONCoding.encode(AccountsMethods.DeleteDevice.Request(deviceId: id))
            return try await g.forward(g.clients.accounts, AccountsMethods.DeleteDevice.type, payload: payload, caller: caller, status: .noContent)
        }
    }
}
