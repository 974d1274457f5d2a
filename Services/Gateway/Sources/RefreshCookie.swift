import Foundation
import HTTPTypes
import Hummingbird
import Messaging

/// The web app's refresh token, out of script reach: a browser that sends
/// `X-Chronir-Session: cookie` gets its refresh token in an `HttpOnly; Secure; SameSite=Strict`
/// cookie scoped to `/v1/auth/refresh` instead of in the JSON answer, and refreshes with that
/// cookie (no body needed). The access token stays in the page's memory only. Mobile clients
/// (no header) keep the JSON form. A cross-site page cannot use the cookie: `SameSite=Strict`
/// keeps it off cross-site requests, and the custom header needs a CORS preflight nobody grants.
enum RefreshCookie {
    static let name = "chronir_refresh"
    static let path = "/v1/auth/refresh"
    static let modeHeader = HTTPField.Name("X-Chronir-Session")!
    /// The cookie's lifetime: that of a refresh token (`CHRONIR_REFRESH_TTL` of accounts, 30 days).
    static let maxAge = 30 * 86_400

    /// Whether the request asks for the cookie form.
    static func wanted(_ request: Request) -> Bool {
        request.headers[modeHeader]?.lowercased() == "cookie"
    }

    /// The refresh token the request's `Cookie` header carries, if any.
    static func value(_ request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, parts[0] == name, !parts[1].isEmpty { return parts[1] }
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

    /// An answer carrying tokens (`AuthResult`), for `request`: as it is, or — in the cookie
    /// form — without `refreshToken`, which goes into the cookie.
    static func answer(_ reply: Data, status: HTTPResponse.Status, for request: Request) -> Response {
        guard wanted(request), var object = (try? JSONSerialization.jsonObject(with: reply)) as? [String: Any],
              let token = object.removeValue(forKey: "refreshToken") as? String,
              let body = try? JSONSerialization.data(withJSONObject: object) else {
            return HTTPSupport.json(reply, status: status)
        }
        return HTTPSupport.json(body, status: status, headers: [.setCookie: header(token)])
    }
}
