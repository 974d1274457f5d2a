import AsyncHTTPClient
import Foundation
import GoogleAPI
import Messaging
import NIOCore
import NIOFoundationCompat

/// The Google Play Developer API with a service account: subscriptions
/// (`purchases.subscriptionsv2.get`) and one-time products — the paid snoozes —
/// (`purchases.products.get` and `:consume`).
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
        let response = try await Self.fetch(client, request)
        let data = Data(buffer: response.body)
        switch response.status {
        case 200: break
        case 401: oauth.invalidate(); throw ServiceError(.serviceUnavailable, "Google Play refused our credentials (401); retry")
        case 400, 404, 410: throw ServiceError(.receiptInvalid, "Google Play does not know this purchase token (\(response.status))")
        default: throw ServiceError(.serviceUnavailable, "Google Play answered \(response.status)")
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

    /// The parts of a `ProductPurchase` that matter here.
    struct ProductPurchase: Sendable {
        /// 0 purchased, 1 cancelled, 2 pending.
        var purchaseState: Int
        /// 0 not yet consumed, 1 consumed.
        var consumptionState: Int
        var orderId: String?
        var purchaseTime: Date?
        /// What the app set at purchase (Chronir: the buyer's uid), if anything.
        var obfuscatedAccountId: String?
    }

    private func productURL(_ productId: String, _ token: String) -> String {
        let escaped = token.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/:"))) ?? token
        return "\(baseURL)/androidpublisher/v3/applications/\(packageName)/purchases/products/\(productId)/tokens/\(escaped)"
    }

    /// `purchases.products.get`: the purchase of `productId` that `token` names.
    func product(_ productId: String, token: String) async throws -> ProductPurchase {
        let data = try await send(HTTPClientRequest(url: productURL(productId, token)), what: "purchase of \(productId)")
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ServiceError(.serviceUnavailable, "Google Play answered something unreadable")
        }
        let millis = (json["purchaseTimeMillis"] as? String).flatMap(Double.init)
        return ProductPurchase(purchaseState: json["purchaseState"] as? Int ?? -1, consumptionState: json["consumptionState"] as? Int ?? 0,
                               orderId: json["orderId"] as? String, purchaseTime: millis.map { Date(timeIntervalSince1970: $0 / 1000) },
                               obfuscatedAccountId: json["obfuscatedExternalAccountId"] as? String)
    }

    /// `purchases.products.consume`: the purchase is used up (it cannot pay for anything else,
    /// and the user may buy the product again).
    func consume(_ productId: String, token: String) async throws {
        var request = HTTPClientRequest(url: productURL(productId, token) + ":consume")
        request.method = .POST
        _ = try await send(request, what: "purchase of \(productId)")
    }

    /// One exchange with the Play API, head and body within 15 s (``BoundedFetch``); past it,
    /// 503 `CA022` (the store did not answer; the client may retry).
    static func fetch(_ client: HTTPClient, _ request: HTTPClientRequest) async throws -> BoundedFetch.Answer {
        do {
            return try await BoundedFetch.fetch(client, request, within: .seconds(15), maxBytes: 1 << 20)
        } catch let error as BoundedFetch.TimedOut {
            throw ServiceError(.serviceUnavailable, "Google Play did not answer within \(error.limit); retry")
        }
    }

    private func send(_ request: HTTPClientRequest, what: String) async throws -> Data {
        var request = request
        request.headers.add(name: "authorization", value: "Bearer \(try await oauth.accessToken())")
        let response = try await Self.fetch(client, request)
        let data = Data(buffer: response.body)
        switch response.status {
        case 200, 204: return data
        case 401: oauth.invalidate(); throw ServiceError(.serviceUnavailable, "Google Play refused our credentials (401); retry")
        case 400, 404, 410: throw ServiceError(.receiptInvalid, "Google Play does not know this \(what) (\(response.status))")
        default: throw ServiceError(.serviceUnavailable, "Google Play answered \(response.status)")
        }
    }
}
