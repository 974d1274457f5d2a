import Foundation
import Contracts
import Hummingbird
import Messaging

/// `/v1/auth/*`: sign-up, login, refresh, logout, password reset and email verification.
/// Sign-up, login, reset mails and token confirmations pass ``AuthThrottle``.
enum AuthRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        addSignIns(to: router, gateway: g)
        addAddressProofs(to: router, gateway: g)
    }

    /// Sign-up, the ways in (password, Apple, Google, anonymous) and linking one to an account.
    static func addSignIns(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.post("/v1/auth/signup") { request, context in
            let payload = try await HTTPSupport.payload(request)
            try await g.throttle.admitSignup(address: g.source(request, context))
            return try await tokens(AccountsMethods.Signup.self, request, payload: payload, status: .created, gateway: g)
        }
        router.post("/v1/auth/login") { request, context in
            let body = try await HTTPSupport.object(request)
            // The account's key is the email's one normal form (trimmed, NFKC, case-folded):
            // " v@x.com", "V@X.COM\t" and "ｖ@ｘ.com" are one account to the lockout.
            let account = EmailKey.normalize(body["email"]?.stringValue ?? "")
            try await g.throttle.admitLogin(account: account, address: g.source(request, context))
            do {
                let response = try await tokens(AccountsMethods.Login.self, request, payload: try JSONCoding.encode(body), gateway: g)
                await g.throttle.recordLogin(account: account, address: g.source(request, context), succeeded: true)
                return response
            } catch let error as ServiceError where error.code == .invalidCredentials {
                await g.throttle.recordLogin(account: account, address: g.source(request, context), succeeded: false)
                throw error
            }
        }
        // Sign in with Apple / Google: the ID token is verified by the accounts service.
        // Either may make an account, so both share the per-address sign-up limit.
        router.post("/v1/auth/apple") { request, context in
            let body = try await HTTPSupport.object(request)
            try await g.throttle.admitSignup(address: g.source(request, context))
            guard let token = body["identityToken"]?.stringValue, !token.isEmpty else {
                throw ServiceError(.validationFailed, "identityToken is required")
            }
            let req = ProviderSignInRequest(provider: "apple", identityToken: token, nonce: body["nonce"]?.stringValue,
                                            displayName: body["displayName"]?.stringValue)
            return try await tokens(AccountsMethods.ProviderSignIn.self, request, payload: try JSONCoding.encode(req), gateway: g)
        }
        router.post("/v1/auth/google") { request, context in
            let body = try await HTTPSupport.object(request)
            try await g.throttle.admitSignup(address: g.source(request, context))
            guard let token = body["idToken"]?.stringValue, !token.isEmpty else { throw ServiceError(.validationFailed, "idToken is required") }
            let req = ProviderSignInRequest(provider: "google", identityToken: token, nonce: body["nonce"]?.stringValue,
                                            displayName: body["displayName"]?.stringValue)
            return try await tokens(AccountsMethods.ProviderSignIn.self, request, payload: try JSONCoding.encode(req), gateway: g)
        }
        router.post("/v1/auth/anonymous") { request, context in
            let payload = try await HTTPSupport.payload(request)
            try await g.throttle.admitSignup(address: g.source(request, context))
            return try await tokens(AccountsMethods.Anonymous.self, request, payload: payload, status: .created, gateway: g)
        }
        router.post("/v1/auth/link") { request, context in
            let caller = try await g.caller(request)
            var body = try await HTTPSupport.object(request)
            // A password is one scrypt hash: limited per account and per address before it is sent.
            if body["password"] != nil { try await g.throttle.admitPasswordLink(user: caller.uid, address: g.source(request, context)) }
            if body["provider"]?.stringValue == "google", body["identityToken"] == nil, let token = body["idToken"] { body["identityToken"] = token }
            body["idToken"] = nil
            return try await g.forward(AccountsMethods.Link.self, g.clients.accounts, payload: try JSONCoding.encode(body), caller: caller)
        }
    }

    /// Password reset, email verification, refresh and logout.
    static func addAddressProofs(to router: Router<GatewayContext>, gateway g: Gateway) {
        // Password reset and email verification (the mails go out from the accounts service).
        // A reset mail is limited per asking address (with sign-ups) and per email address, so
        // nobody can flood one inbox from many addresses.
        router.post("/v1/auth/password-reset") { request, context in
            let body = try await HTTPSupport.object(request)
            try await g.throttle.admitSignup(address: g.source(request, context))
            let email = EmailKey.normalize(body["email"]?.stringValue ?? "")
            if !email.isEmpty { try await g.throttle.admitResetMail(email: email) }
            return try await g.forward(AccountsMethods.RequestPasswordReset.self, g.clients.accounts, payload: try JSONCoding.encode(body),
                                       caller: nil, status: .accepted)
        }
        router.post("/v1/auth/password-reset/confirm") { request, context in
            try await confirm(AccountsMethods.ConfirmPasswordReset.self, request, address: g.source(request, context), gateway: g)
        }
        // A verification link confirms the address only inside the account it was sent for
        // (``AccountsHandlers.confirmVerification``): the caller must be signed in to it.
        router.post("/v1/auth/verify-email") { request, context in
            guard request.headers[.authorization] != nil else {
                throw ServiceError(.authRequired, """
                    sign in to the account this mail was sent for, then open the link again: it confirms the address only \
                    inside that account. If you did not make a Chronir account, ignore the mail
                    """)
            }
            let caller = try await g.caller(request)
            return try await confirm(AccountsMethods.ConfirmVerification.self, request, address: g.source(request, context), caller: caller, gateway: g)
        }
        router.post("/v1/me/email-verification") { request, _ in
            let caller = try await g.caller(request)
            try await g.throttle.admitVerificationMail(user: caller.uid)
            return try await g.forward(AccountsMethods.RequestVerification.self, g.clients.accounts, caller: caller, status: .accepted)
        }
        router.post("/v1/auth/refresh") { request, _ in
            // The web app's refresh token comes in its cookie (``RefreshCookie``), others' in the body.
            var body = try await HTTPSupport.object(request)
            if body["refreshToken"] == nil, RefreshCookie.wanted(request), let token = RefreshCookie.value(request) {
                body["refreshToken"] = .string(token)
            }
            guard body["refreshToken"] != nil else {
                throw ServiceError(.authRequired, "no refresh token (send refreshToken, or the session cookie with X-Chronir-Session: cookie)")
            }
            return try await tokens(AccountsMethods.Refresh.self, request, payload: try JSONCoding.encode(body), gateway: g)
        }
        router.post("/v1/auth/logout") { request, _ in
            let caller = try await g.caller(request)
            var response = try await g.forward(AccountsMethods.Logout.self, g.clients.accounts, payload: try await HTTPSupport.payload(request),
                                               caller: caller, status: .noContent)
            g.verifier.signedOut(caller.session)
            if RefreshCookie.wanted(request) { response.headers.append(contentsOf: RefreshCookie.fields(nil, for: request)) }
            return response
        }
    }

    /// Forwards a request whose answer carries tokens (`AuthResult`): the refresh token in the
    /// JSON body, or for the web app in its cookie (``RefreshCookie``).
    static func tokens(_ method: any RPCMethod.Type, _ request: Request, payload: Data, status: HTTPResponse.Status = .ok,
                       gateway g: Gateway) async throws -> Response {
        RefreshCookie.answer(try await g.call(method, g.clients.accounts, payload: payload, caller: nil), status: status, for: request)
    }

    /// Forwards the confirmation of a mailed token (`method`, answered 204) under the
    /// per-address limit on confirmations; one that succeeds gives its turn back, so the limit
    /// bounds guessing tokens, not answering mails.
    static func confirm(_ method: any RPCMethod.Type, _ request: Request, address: String, caller: Caller? = nil,
                        gateway g: Gateway) async throws -> Response {
        let payload = try await HTTPSupport.payload(request)
        try await g.throttle.admitTokenConfirm(address: address)
        let response = try await g.forward(method, g.clients.accounts, payload: payload, caller: caller, status: .noContent)
        await g.throttle.refundTokenConfirm(address: address)
        return response
    }
}
