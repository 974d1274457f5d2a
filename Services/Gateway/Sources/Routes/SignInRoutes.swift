import Contracts
import Hummingbird
import Messaging

/// `/v1/me/identities` and `/v1/me/sessions`: the Apple/Google identities linked to the
/// caller's account (list, unlink) and its signed-in sessions (list, end one, end all).
enum SignInRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.get("/v1/me/identities") { request, _ in
            try await g.forward(AccountsMethods.ListIdentities.self, g.clients.accounts, caller: try await g.caller(request))
        }
        router.delete("/v1/me/identities/:provider") { request, context in
            let caller = try await g.caller(request)
            let payload = try JSONCoding.encode(AccountsMethods.UnlinkIdentity.Request(provider: try context.parameters.require("provider")))
            return try await g.forward(AccountsMethods.UnlinkIdentity.self, g.clients.accounts, payload: payload, caller: caller, status: .noContent)
        }
        router.get("/v1/me/sessions") { request, _ in
            try await g.forward(AccountsMethods.ListSessions.self, g.clients.accounts, caller: try await g.caller(request))
        }
        router.delete("/v1/me/sessions/:sessionId") { request, context in
            let caller = try await g.caller(request)
            let id = try context.parameters.require("sessionId")
            let payload = try JSONCoding.encode(AccountsMethods.EndSession.Request(sessionId: id))
            var response = try await g.forward(AccountsMethods.EndSession.self, g.clients.accounts, payload: payload, caller: caller, status: .noContent)
            // Ended (accounts confirmed it was the caller's): refused here at once, by other
            // replicas once the accounts stream says so.
            g.verifier.signedOut(id)
            if id == caller.session, RefreshCookie.wanted(request) { response.headers.append(contentsOf: RefreshCookie.fields(nil, for: request)) }
            return response
        }
        // "Sign out everywhere": every session of the account, this one included.
        router.delete("/v1/me/sessions") { request, _ in
            let caller = try await g.caller(request)
            var response = try await g.forward(AccountsMethods.EndAllSessions.self, g.clients.accounts, caller: caller)
            g.verifier.signedOut(caller.session)
            if RefreshCookie.wanted(request) { response.headers.append(contentsOf: RefreshCookie.fields(nil, for: request)) }
            return response
        }
    }
}
