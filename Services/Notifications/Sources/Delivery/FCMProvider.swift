import AsyncHTTPClient
import Foundation
import NotificationsCore
import GoogleAPI
import NIOCore

/// Firebase Cloud Messaging HTTP v1: `POST /v1/projects/<project>/messages:send` with an OAuth
/// 2.0 token of a service account, and the message of Appendix C (`android.priority` high and
/// channel `cycle_alarm_channel` for fires).
struct FCMProvider: PushProvider {
    /// `https://fcm.googleapis.com` or a local server speaking the API.
    let baseURL: String
    let projectId: String
    let oauth: GoogleOAuth
    let client: HTTPClient

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The `message` of Appendix C for FCM.
    static func message(_ content: PushContent, token: String) -> [String: Any] {
        if content.silent == true {
            // A data message: the app handles it in the background and shows nothing.
            var android: [String: Any] = ["priority": "normal"]
            if let key = content.collapseKey { android["collapse_key"] = key }
            return ["token": token, "data": content.data, "android": android]
        }
        var android: [String: Any] = ["priority": content.urgent ? "high" : "normal"]
        var notification: [String: Any] = ["channel_id": content.urgent ? "cycle_alarm_channel" : "chronir_updates"]
        if content.urgent { notification["sound"] = "default_alarm" }
        if let key = content.collapseKey { android["collapse_key"] = key; notification["tag"] = key }
        android["notification"] = notification
        return [
            "token": token,
            "notification": ["title": content.title, "body": content.body],
            "data": content.data,
            "android": android,
        ]
    }

    func send(_ content: PushContent, to target: PushTarget) async -> PushResult {
        guard let token = target.token else { return PushResult(status: 0, outcome: .unregistered, reason: "no registration token") }
        let bearer: String
        do {
            bearer = try await oauth.accessToken()
        } catch {
            return PushResult(status: 0, outcome: .retry, reason: "oauth: \(error)")
        }
        var request = HTTPClientRequest(url: "\(baseURL)/v1/projects/\(projectId)/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "content-type", value: "application/json")
        guard let body = try? JSONSerialization.data(withJSONObject: ["message": Self.message(content, token: token)], options: [.sortedKeys]) else {
            return PushResult(status: 0, outcome: .failed, reason: "cannot encode the message")
        }
        request.body = .bytes(ByteBuffer(data: body))
        let result = await ProviderHTTP.execute(client, request, timeout: .seconds(15), reason: { _, data in
            Self.errorCode(data)
        }, classify: Self.classify)
        if result.status == 401 { oauth.invalidate() }
        return result
    }

    /// The `errorCode` of the FcmError detail, or the status of the Google error.
    static func errorCode(_ data: Data) -> String? {
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let error = json["error"] as? [String: Any] else { return nil }
        for detail in (error["details"] as? [[String: Any]]) ?? [] {
            if let code = detail["errorCode"] as? String { return code }
        }
        return error["status"] as? String
    }

    /// FCM specifics: `UNREGISTERED` (404) removes the token; `INVALID_ARGUMENT` fails;
    /// `UNAVAILABLE`/`INTERNAL`/`QUOTA_EXCEEDED` retry; 401 retries with a fresh token.
    static func classify(status: Int, reason: String?, retryAfter: TimeInterval?) -> PushResult {
        if reason == "UNREGISTERED" || (status == 404 && reason == "NOT_FOUND") {
            return PushResult(status: status, outcome: .unregistered, reason: reason)
        }
        if status == 401 { return PushResult(status: status, outcome: .retry, reason: reason ?? "UNAUTHENTICATED") }
        return PushResult.classify(status: status, reason: reason, retryAfter: retryAfter)
    }
}
