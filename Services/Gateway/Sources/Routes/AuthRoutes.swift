import Contracts
import Hummingbird
import Messaging

/// `/v1/auth/*`: sign-up, login, refresh, logout. Sign-up and login pass ``AuthThrottle``.
enum AuthRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.post("/v1/auth/signup") { request, context in
            let payload = try await HTTPSupport.payload(request)
            try g.throttle.admitSignup(address: context.peer)
            return try await g.forward(g.clients.accounts, AccountsMethods.Signup.type, payload: payload, caller: nil, status: .created)
        }
        router.post("/v1/auth/login") { request, context in
            let body = try await HTTPSupport.object(request)
            let account = body["email"]?.stringValue?.lowercased() ?? ""
            try g.throttle.admitLogin(account: account, address: context.peer)
            do {
                let response = try await g.forward(g.clients.accounts, AccountsMethods.Login.type, payload: try JSONCoding.encode(body), caller: nil)
                g.throttle.recordLogin(account: account, address: context.peer, succeeded: true)
                return response
            } catch let error as ServiceError where error.code == .invalidCredentials {
                g.throttle.recordLogin(account: account, address: context.peer, succeeded: false)
                throw error
            }
        }
        // Sign in with Apple / Google: the ID token is verified by the accounts service.
        // Either may make an account, so both share the per-address sign-up limit.
        router.post("/v1/auth/apple") { request, context in
            let body = try await HTTPSupport.object(request)
            try g.throttle.admitSignup(address: context.peer)
            guard let token = body["identityToken"]?.stringValue, !token.isEmpty else {
                throw ServiceError(.validationFailed, "identityToken is required")
            }
            let req = ProviderSignInRequest(provider: "apple", identityToken: token, nonce: body["nonce"]?.stringValue,
                                            displayName: body["displayName"]?.stringValue)
            return try await g.forward(g.clients.accounts, AccountsMethods.ProviderSignIn.type, payload: try JSONCoding.encode(req), caller: nil)
        }
        router.post("/v1/auth/google") { request, context in
            let body = try await HTTPSupport.object(request)
            try g.throttle.admitSignup(address: context.peer)
            guard let token = body["idToken"]?.stringValue, !token.isEmpty else { throw ServiceError(.validationFailed, "idToken is required") }
            let req = ProviderSignInRequest(provider: "google", identityToken: token, nonce: body["nonce"]?.stringValue,
                                            displayName: body["displayName"]?.stringValue)
            return try await g.forward(g.clients.accounts, AccountsMethods.ProviderSignIn.type, payload: try JSONCoding.encode(req), caller: nil)
        }
        router.post("/v1/auth/anonymous") { request, context in
            let payload = try await HTTPSupport.payload(request)
            try g.throttle.admitSignup(address: context.peer)
            return try await g.forward(g.clients.accounts, AccountsMethods.Anonymous.type, payload: payload, caller: nil, status: .created)
        }
        router.post("/v1/auth/link") { request, _ in
            let caller = try await g.caller(request)
            var body = try await HTTPSupport.object(request)
            if body["provider"]?.stringValue == "google", body["identityToken"] == nil, let token = body["idToken"] { body["identityToken"] = token }
            body["idToken"] = nil
            return try await g.forward(g.clients.accounts, AccountsMethods.Link.type, payload: try JSONCoding.encode(body), caller: caller)
        }
        // Password reset and email verification (the mails go out from the accounts service).
        router.post("/v1/auth/password-reset") { request, context in
            let payload = try await HTTPSupport.payload(request)
            try g.throttle.admitSignup(address: context.peer)
            return try await g.forward(g.clients.accounts, AccountsMethods.RequestPasswordReset.type, payload: payload, caller: nil, status: .accepted)
        }
        router.post("/v1/auth/password-reset/confirm") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.ConfirmPasswordReset.type, payload: try await HTTPSupport.payload(request),
                                caller: nil, status: .noContent)
        }
        router.post("/v1/auth/verify-email") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.ConfirmVerification.type, payload: try await HTTPSupport.payload(request),
                                caller: nil, status: .noContent)
        }
        router.post("/v1/me/email-verification") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(g.clients.accounts, AccountsMethods.RequestVerification.type, caller: caller, status: .accepted)
        }
        router.post("/v1/auth/refresh") { request, _ in
            try await g.forward(g.clients.accounts, AccountsMethods.Refresh.type, payload: try await HTTPSupport.payload(request), caller: nil)
        }
        router.post("/v1/auth/logout") { request, _ in
            let caller = try await g.caller(request)
            return try await g.forward(g.clients.accounts, AccountsMethods.Logout.type, payload: try await HTTPSupport.payload(request),
                                       caller: caller, status: .noContent)
        }
    }
}
