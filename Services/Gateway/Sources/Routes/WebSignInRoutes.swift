import Foundation
import Hummingbird
import Messaging
import ServiceKit
import NIOCore

/// Sign in with Apple and Google from the web app, by the providers' OpenID Connect redirect
/// flows (no provider script is loaded into the page, so its CSP stays `'self'`):
///
/// - `GET /v1/auth/providers` names the providers this server offers to browsers, with the web
///   client id and the authorization endpoint to send the user to.
/// - The app sends the user to the provider with `redirect_uri` = `{origin}/oauth/callback`, a
///   random `state` and a `nonce`.
/// - Apple answers with a form POST (`response_mode=form_post`, which Apple requires when asking
///   for the name and email): `POST /oauth/callback` turns the form into a `303` to
///   `/app/#id_token=…&state=…&user=…`. Google answers in the fragment
///   (`response_mode=fragment`): `GET /oauth/callback` sends a `303` to `/app/`, and the browser
///   carries the fragment along.
/// - The app checks `state`, then signs in with `POST /v1/auth/apple` or `/v1/auth/google`, where
///   the accounts service verifies the ID token as it does a phone's.
///
/// The ID token only ever travels in a fragment (never in a URL a server logs) and is useless
/// without this server's verification of audience, expiry and, for Apple, the nonce.
struct WebSignIn: Sendable {
    /// A provider the web app may offer.
    struct Provider: Codable, Sendable, Equatable {
        var name: String
        var clientId: String
        var authorizeUrl: String
        var responseMode: String
    }

    let providers: [Provider]

    /// `CHRONIR_WEB_APPLE_CLIENT_ID` (an Apple Services ID) and `CHRONIR_WEB_GOOGLE_CLIENT_ID` (an
    /// OAuth web client id) turn the buttons on; each must also be among the accounts service's
    /// `CHRONIR_APPLE_AUDIENCES` / `CHRONIR_GOOGLE_AUDIENCES`. `CHRONIR_APPLE_AUTHORIZE_URL` and
    /// `CHRONIR_GOOGLE_AUTHORIZE_URL` default to the providers' own endpoints. Read with the
    /// gateway's other settings (``GatewayConfig/webSignIn``).
    static func from(_ env: ServiceEnvironment) throws -> WebSignIn {
        var providers: [Provider] = []
        if let id = env.optional("CHRONIR_WEB_APPLE_CLIENT_ID") {
            providers.append(.init(name: "apple", clientId: id,
                                   authorizeUrl: try url(env, "CHRONIR_APPLE_AUTHORIZE_URL", "https://appleid.apple.com/auth/authorize"),
                                   responseMode: "form_post"))
        }
        if let id = env.optional("CHRONIR_WEB_GOOGLE_CLIENT_ID") {
            providers.append(.init(name: "google", clientId: id,
                                   authorizeUrl: try url(env, "CHRONIR_GOOGLE_AUTHORIZE_URL", "https://accounts.google.com/o/oauth2/v2/auth"),
                                   responseMode: "fragment"))
        }
        return WebSignIn(providers: providers)
    }

    private static func url(_ env: ServiceEnvironment, _ name: String, _ fallback: String) throws -> String {
        let value = env.string(name, fallback)
        guard let u = URL(string: value), ["https", "http"].contains(u.scheme ?? ""), u.host != nil, u.fragment == nil else {
            throw ServiceEnvironment.Invalid("\(name) must be an http(s) URL without a fragment, not \(value)")
        }
        return value
    }

    /// The form fields an Apple callback may carry, and the largest form taken.
    static let callbackFields = ["id_token", "state", "user", "error", "error_description"]
    static let maxFormBytes = 16 << 10

    static func add(to router: Router<GatewayContext>, signIn: WebSignIn) {
        router.get("/v1/auth/providers") { _, _ in
            try HTTPSupport.json(["providers": signIn.providers])
        }
        // Google (fragment): the browser keeps the fragment across a redirect without one.
        router.get("/oauth/callback") { _, _ in
            Response(status: .seeOther, headers: [.location: "/app/", .cacheControl: "no-store"])
        }
        // Apple (form_post): the form becomes the app's fragment.
        // A form that cannot be read goes back to the app as an `error` it shows on the sign-in page.
        router.post("/oauth/callback") { request, _ in
            var request = request
            var form: [String: String] = [:]
            if let body = try? await request.collectBody(upTo: maxFormBytes) { form = parseForm(String(buffer: body)) }
            if form["state"] == nil || (form["id_token"] == nil && form["error"] == nil) {
                form = ["error": "invalid_request", "error_description": "the sign-in answer could not be read", "state": form["state"] ?? ""]
            }
            let fragment = callbackFields.compactMap { k in form[k].map { "\(k)=\(encode($0))" } }.joined(separator: "&")
            return Response(status: .seeOther, headers: [.location: "/app/#\(fragment)", .cacheControl: "no-store"])
        }
    }

    /// `application/x-www-form-urlencoded`: `+` is a space, then percent-decoding; the first
    /// value of a repeated name counts.
    static func parseForm(_ body: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String? { s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { continue }
            if out[name] == nil { out[name] = value }
        }
        return out
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }
}
