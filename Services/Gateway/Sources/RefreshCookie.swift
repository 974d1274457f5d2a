import Foundation
import HTTPTypes
import Hummingbird
import Messaging

/// The web app's refresh token, out of script reach: a browser that sends
/// `X-Chronir-Session: cookie` gets its refresh token in a
/// `__Host-chronir_refresh` cookie (`HttpOnly; Secure; SameSite=Strict; Path=/`, no `Domain`)
/// instead of in the JSON answer, and refreshes with that cookie (no body needed). The access
/// token stays in the page's memory only. Mobile clients (no header) keep the JSON form. A
/// cross-site page cannot use the cookie: `SameSite=Strict` keeps it off cross-site requests,
/// and the custom header needs a CORS preflight nobody grants.
///
/// The `__Host-` prefix makes the browser refuse the cookie unless it is `Secure`, has
/// `Path=/` and no `Domain`: a page on a sibling subdomain cannot plant or overwrite it
/// (cookie tossing, a forced sign-in as the attacker). The price is `Path=/`: the browser sends
/// it with every request to the origin, and the gateway reads it only on refresh and logout.
/// Sessions begun before the prefix (`chronir_refresh`, `Path=/v1/auth/refresh`) still refresh
/// once: the answer moves them to the new cookie and deletes the old one.
enum RefreshCookie {
    static let name = "__Host-chronir_refresh"
    static let path = "/"
    /// The cookie of gateways before issue 57, read (and deleted) so those sessions carry on.
    static let legacyName = "chronir_refresh"
    static let legacyPath = "/v1/auth/refresh"
    static let modeHeader = HTTPField.Name("X-Chronir-Session")!
    /// The cookie's lifetime: that of a refresh token (`CHRONIR_REFRESH_TTL` of accounts, 30 days).
    static let maxAge = 30 * 86_400

    /// Whether the request asks for the cookie form.
    static func wanted(_ request: Request) -> Bool {
        request.headers[modeHeader]?.lowercased() == "cookie"
    }

    /// The refresh token the request's `Cookie` header carries, if any (the prefixed cookie
    /// before the legacy one).
    static func value(_ request: Request) -> String? {
        cookie(name, in: request) ?? cookie(legacyName, in: request)
    }

    /// The value of cookie `wanted` in the request's `Cookie` headers.
    static func cookie(_ wanted: String, in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, parts[0] == wanted, !parts[1].isEmpty { return parts[1] }
            }
        }
        return nil
    }

    /// `Set-Cookie` for `token` (nil: delete the cookie).
    static func header(_ token: String?) -> String {
        let value = token ?? ""
        let age = token == nil ? 0 : maxAge
        return "\(name)=\(value); Path=\(path); Max-Age=\(age); HttpOnly; Secure; SameSite=Strict"
    }

    /// The `Set-Cookie` fields for `token` (nil: delete) in answer to `request`: with the legacy
    /// cookie's deletion when the request carried one.
    static func fields(_ token: String?, for request: Request) -> HTTPFields {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .setCookie, value: header(token)))
        if cookie(legacyName, in: request) != nil {
            fields.append(HTTPField(name: .setCookie, value: "\(legacyName)=; Path=\(legacyPath); Max-Age=0; HttpOnly; Secure; SameSite=Strict"))
        }
        return fields
    }

    /// An answer carrying tokens (`AuthResult`), for `request`: as it is, or — in the cookie
    /// form — without `refreshToken`, which goes into the cookie.
    static func answer(_ reply: Data, status: HTTPResponse.Status, for request: Request) -> Response {
        guard wanted(request), var object = (try? JSONSerialization.jsonObject(with: reply)) as? [String: Any],
              let token = object.removeValue(forKey: "refreshToken") as? String,
              let body = try? JSONSerialization.data(withJSONObject: object) else {
            return HTTPSupport.json(reply, status: status)
        }
        return HTTPSupport.json(body, status: status, headers: fields(token, for: request))
    }
}
