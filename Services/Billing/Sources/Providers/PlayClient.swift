import AsyncHTTPClient
import Foundation
import GoogleAPI
import Messaging
import NIOCore
import NIOFoundationCompat

/// The Google Play Developer API (`purchases.subscriptionsv2.get`) with a service account.
struct PlayClient: Sendable {
    /// `https://androidpublisher.googleapis.com` or a local server speaking the API.
    let baseURL: String
    let packageName: String
    let oauth: GoogleOAuth
    let client: HTTPClient

    static let scope = "https://www.googleapis.com/auth/androidpublisher"

    /// The parts of a `SubscriptionPurchaseV2` that matter here.
    struct Purchase: Sendable {
        var state: String
        var productId: String?
        var expiry: Date?
        var start: Date?
        var autoRenewing: Bool
        var cancelled: Bool
    }

    func subscription(token: String) async throws -> Purchase {
        let bearer = try await oauth.accessToken()
        let escaped = token.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? token
        var request = HTTPClientRequest(url: "\(baseURL)/androidpublisher/v3/applications/\(packageName)/purchases/subscriptionsv2/tokens/\(escaped)")
        request.headers.add(name: "authorization", value: "Bearer \(bearer)")
        let response = try await client.execute(request, timeout: .seconds(15))
        let data = Data(buffer: try await response.body.collect(upTo: 1 << 20))
        switch response.status.code {
        case 200: break
        case 401: oauth.invalidate(); throw ServiceError(.serviceUnavailable, "Google Play refused our credentials (401); retry")
        case 400, 404, 410: throw ServiceError(.receiptInvalid, "Google Play does not know this purchase token (\(response.status.code))")
        default: throw ServiceError(.serviceUnavailable, "Google Play answered \(response.status.code)")
        }
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let state = json["subscriptionState"] as? String else {
            throw ServiceError(.serviceUnavailable, "Google Play answered something unreadable")
        }
        let item = (json["lineItems"] as? [[String: Any]])?.first
        let iso = { (s: Any?) in (s as? String).flatMap(ISOTime.parse) }
        let auto = ((item?["autoRenewingPlan"] as? [String: Any])?["autoRenewEnabled"] as? Bool) ?? false
        return Purchase(state: state, productId: item?["productId"] as? String, expiry: iso(item?["expiryTime"]), start: iso(json["startTime"]),
                        autoRenewing: auto, cancelled: json["canceledStateContext"] != nil)
    }
}
