import Foundation
import JWTKit
import Messaging

/// Verifies App Store signed data (JWS, ES256, `x5c` chain up to the trusted root: Apple Root
/// CA - G3 unless configured otherwise) with jwt-kit's X.509 verifier, then Apple's marker
/// extensions on the chain (``AppleMarkers``), and checks the bundle id.
struct AppleVerifier: Sendable {
    let verifier: X5CVerifier
    let bundleId: String
    /// Whether transactions of the App Store's Sandbox and Xcode environments count
    /// (`CHRONIR_APPLE_ALLOW_SANDBOX`, off by default: TestFlight and sandbox purchases are free).
    let allowSandbox: Bool

    init(rootPEMs: [String], bundleId: String, allowSandbox: Bool = false) throws {
        verifier = try X5CVerifier(rootCertificates: rootPEMs)
        self.bundleId = bundleId
        self.allowSandbox = allowSandbox
    }

    /// A StoreKit 2 transaction (`JWSTransactionDecodedPayload`); dates in milliseconds.
    struct Transaction: JWTPayload, Equatable {
        var transactionId: String
        var originalTransactionId: String
        var bundleId: String
        var productId: String
        var purchaseDate: Int64?
        var originalPurchaseDate: Int64?
        var expiresDate: Int64?
        var signedDate: Int64
        var revocationDate: Int64?
        var type: String?
        var appAccountToken: String?
        var environment: String?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// `JWSRenewalInfoDecodedPayload`.
    struct RenewalInfo: JWTPayload {
        var originalTransactionId: String?
        var autoRenewStatus: Int?
        var gracePeriodExpiresDate: Int64?
        var signedDate: Int64?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// `ResponseBodyV2DecodedPayload` of App Store Server Notifications V2.
    struct Notification: JWTPayload {
        struct Body: Codable, Sendable {
            var bundleId: String?
            var environment: String?
            var signedTransactionInfo: String?
            var signedRenewalInfo: String?
        }
        var notificationType: String
        var subtype: String?
        var notificationUUID: String
        var data: Body?
        var signedDate: Int64
        var version: String?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// Why signed data was refused, for the log and the `CA027` message.
    static func refused(_ what: String, _ error: any Error) -> ServiceError {
        ServiceError(.receiptInvalid, "\(what) is not validly signed: \(error)")
    }

    func transaction(_ jws: String) async throws -> Transaction {
        let t: Transaction
        do {
            t = try await verifier.verifyJWS(jws, as: Transaction.self)
        } catch {
            throw Self.refused("the transaction", error)
        }
        try AppleMarkers.check(jws, what: "the transaction")
        guard t.bundleId == bundleId else {
            throw ServiceError(.receiptInvalid, "the transaction is for bundle \(t.bundleId), not \(bundleId)")
        }
        let environment = t.environment ?? "none"
        guard environment == "Production" || (allowSandbox && (environment == "Sandbox" || environment == "Xcode")) else {
            throw ServiceError(.receiptInvalid, "the transaction is from the App Store's \(environment) environment; only Production purchases count here"
                                   + (allowSandbox ? "" : " (CHRONIR_APPLE_ALLOW_SANDBOX turns Sandbox on for a test deployment)"))
        }
        return t
    }

    func renewal(_ jws: String) async throws -> RenewalInfo {
        do {
            let info = try await verifier.verifyJWS(jws, as: RenewalInfo.self)
            try AppleMarkers.check(jws, what: "the renewal info")
            return info
        } catch let error as ServiceError {
            throw error
        } catch {
            throw Self.refused("the renewal info", error)
        }
    }

    func notification(_ jws: String) async throws -> Notification {
        let n: Notification
        do {
            n = try await verifier.verifyJWS(jws, as: Notification.self)
        } catch {
            throw Self.refused("the notification", error)
        }
        try AppleMarkers.check(jws, what: "the notification")
        if let b = n.data?.bundleId, b != bundleId {
            throw ServiceError(.receiptInvalid, "the notification is for bundle \(b), not \(bundleId)")
        }
        return n
    }
}

extension Int64 {
    /// Milliseconds since 1970 as a date.
    var msDate: Date { Date(timeIntervalSince1970: Double(self) / 1000) }
}
