import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging

/// Products, entitlements, purchases and the stores' webhooks (answered by billing).
enum BillingRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway, logger: Logger) {
        let billing = g.clients.billing
        /// A buyer has credentials: an anonymous account (no email in its token) stays Free
        /// until it links an email, Apple or Google account. Each verification (a store call or
        /// a signature check) counts toward the account's hourly store limit.
        @Sendable func purchaser(_ request: Request) async throws -> Caller {
            let caller = try await g.caller(request)
            guard !caller.email.isEmpty else {
                throw ServiceError(.permissionDenied,
                                   "an anonymous account cannot subscribe; link an email, Apple or Google account first (POST /v1/auth/link), then refresh the token")
            }
            try await g.throttle.admitStoreVerification(user: caller.uid)
            return caller
        }
        router.get("/v1/products") { _, _ in
            try await g.forward(BillingMethods.Products.self, billing, caller: nil)
        }
        router.get("/v1/entitlements") { request, _ in
            try await g.forward(BillingMethods.Entitlements.self, billing, caller: try await g.caller(request))
        }
        router.post("/v1/subscriptions/apple") { request, _ in
            let caller = try await purchaser(request)
            return try await g.forward(BillingMethods.Apple.self, billing, payload: try await HTTPSupport.payload(request), caller: caller)
        }
        router.post("/v1/subscriptions/google") { request, _ in
            let caller = try await purchaser(request)
            return try await g.forward(BillingMethods.Google.self, billing, payload: try await HTTPSupport.payload(request), caller: caller)
        }
        router.post("/v1/subscriptions/restore") { request, _ in
            let caller = try await purchaser(request)
            return try await g.forward(BillingMethods.Restore.self, billing, payload: try await HTTPSupport.payload(request), caller: caller)
        }
        router.get("/v1/me/snooze-ledger") { request, _ in
            try await g.forward(BillingMethods.Ledger.self, billing, caller: try await g.caller(request))
        }
        router.post("/v1/me/snooze-ledger") { request, _ in
            let caller = try await g.caller(request)
            try await g.throttle.admitStoreVerification(user: caller.uid)
            return try await g.forward(BillingMethods.PaidSnooze.self, billing, payload: try await HTTPSupport.payload(request), caller: caller,
                                       status: .created)
        }
        router.put("/v1/alarms/:id/snooze-policy") { request, context in
            let caller = try await g.caller(request)
            return try await g.forward(BillingMethods.PutSnoozePolicy.self, billing,
                                       payload: try await HTTPSupport.payload(request, adding: ["alarmId": .string(try context.parameters.require("id"))]),
                                       caller: caller)
        }
        addStoreNotifications(to: router, gateway: g, logger: logger)
    }

    /// The stores' server notifications.
    static func addStoreNotifications(to router: Router<GatewayContext>, gateway g: Gateway, logger: Logger) {
        let billing = g.clients.billing
        // The stores call these: no user token; the signature (Apple) or the push token (Google) is the proof.
        // The stores' notifications carry no user: refused ones are limited per address before
        // the body is read (an applied one gives its turn back), and a wrong one is logged.
        router.post("/v1/webhooks/apple") { request, context in
            let address = g.source(request, context)
            try await g.throttle.admitStoreNotification(address: address)
            do {
                let body = try await HTTPSupport.object(request)
                guard case .string(let payload)? = body["signedPayload"] else {
                    throw ServiceError(.validationFailed, "the body must be {\"signedPayload\": \"<JWS>\"}")
                }
                let response = try await g.forward(BillingMethods.AppleNotification.self, billing,
                                                   payload: try JSONCoding.encode(BillingMethods.AppleNotification.Request(signedPayload: payload)), caller: nil)
                await g.throttle.refundStoreNotification(address: address)
                return response
            } catch let e as ServiceError {
                logger.warning("app store webhook refused", metadata: ["code": "\(e.code.rawValue)", "reason": "\(e.message)"])
                throw e
            }
        }
        router.post("/v1/webhooks/google") { request, context in
            let address = g.source(request, context)
            try await g.throttle.admitStoreNotification(address: address)
            do {
                let body = try await HTTPSupport.object(request)
                let token = request.uri.queryParameters.get("token")
                let response = try await g.forward(BillingMethods.GoogleNotification.self, billing,
                                                   payload: try JSONCoding.encode(BillingMethods.GoogleNotification.Request(token: token, body: .object(body))),
                                                   caller: nil)
                await g.throttle.refundStoreNotification(address: address)
                return response
            } catch let e as ServiceError {
                logger.warning("google play webhook refused", metadata: ["code": "\(e.code.rawValue)", "reason": "\(e.message)"])
                throw e
            }
        }
    }
}
