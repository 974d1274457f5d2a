import Foundation
import Messaging

/// The body of every error answer of the HTTP API: an RFC 9457 problem details object
/// (`application/problem+json`), with the members the apps read before it (`code`, `message`,
/// `details`) kept beside the standard ones (`proto/errors.md`):
///
///     {"type": "https://chronir.app/problems/sync-conflict", "title": "Sync conflict",
///      "status": 412, "detail": "alarm a1 is at version 2, not 1",
///      "code": "CA010", "message": "alarm a1 is at version 2, not 1", "details": {...}}
///
/// `instance` is not sent: a request's path can hold a secret (a calendar feed's token, an
/// invitation's code), and an error body ends up in client logs.
struct ProblemDetails: Encodable, Sendable {
    /// The media type of error answers.
    static let mediaType = "application/problem+json"
    /// Where the problem types live: `<base><lower-kebab name>`, e.g. `…/sync-conflict`.
    static let typeBase = "https://chronir.app/problems/"

    /// A URI naming the kind of problem, one per CA code.
    var type: String
    /// A short summary of the kind of problem, the same for every answer with this code.
    var title: String
    /// The HTTP status of the answer.
    var status: Int
    /// What went wrong in this request (naming the offending field where there is one).
    var detail: String
    /// The CA code (`CA010`), as before.
    var code: String
    /// The same text as `detail`, kept for clients written before problem details (deprecated).
    var message: String
    /// Structured extras (the current document on `CA010`, `retryAfterSeconds` on `CA019`…).
    var details: JSONValue?

    init(_ error: ServiceError, status: Int) {
        self.type = Self.typeURI(for: error.code)
        self.title = Self.standardTitle(for: error.code)
        self.status = status
        self.detail = error.message
        self.code = error.code.rawValue
        self.message = error.message
        self.details = error.details
    }

    /// The `type` URI of a code: the base and the code's name in lower kebab case.
    static func typeURI(for code: ErrorCode) -> String {
        typeBase + code.name.lowercased().replacingOccurrences(of: "_", with: "-")
    }

    /// The body: without `details` should they not encode, a fixed `CA023` one should nothing.
    func encoded() -> Data {
        if let data = try? JSONCoding.encode(self) { return data }
        var plain = self
        plain.details = nil
        if let data = try? JSONCoding.encode(plain) { return data }
        return Data(#"{"type":"https://chronir.app/problems/internal-error","title":"Internal error","status":500,"detail":"internal error","code":"CA023","message":"internal error"}"#.utf8)
    }

    /// The stable `title` of each code (the table of `proto/errors.md`).
    static func standardTitle(for code: ErrorCode) -> String {
        switch code {
        case .alarmLimitReached: "Alarm limit reached"
        case .tierRequired: "Higher tier required"
        case .groupMemberLimit: "Group member limit reached"
        case .invitationExpired: "Invitation expired"
        case .invitationAlreadyAccepted: "Invitation already accepted"
        case .alarmNotFound: "Alarm not found"
        case .permissionDenied: "Permission denied"
        case .scheduleInvalid: "Invalid schedule"
        case .photoTooLarge: "Photo too large"
        case .syncConflict: "Sync conflict"
        case .networkUnavailable: "Network unavailable"
        case .authRequired: "Authentication required"
        case .subscriptionExpired: "Subscription expired"
        case .osAlarmPermissionDenied: "Alarm permission denied"
        case .notificationPermissionDenied: "Notification permission denied"
        case .validationFailed: "Validation failed"
        case .notFound: "Not found"
        case .alreadyExists: "Already exists"
        case .rateLimited: "Too many requests"
        case .messageInvalid: "Invalid message"
        case .deadlineExceeded: "Deadline exceeded"
        case .serviceUnavailable: "Service unavailable"
        case .internalError: "Internal error"
        case .payloadTooLarge: "Payload too large"
        case .invalidCredentials: "Invalid credentials"
        case .snoozeLimitReached: "Snooze limit reached"
        case .receiptInvalid: "Invalid receipt"
        case .invitationNotPending: "Invitation not pending"
        case .paymentRequired: "Payment required"
        case .callerNotAllowed: "Caller not allowed"
        case .methodNotAllowed: "Method not allowed"
        case .unsupportedMediaType: "Unsupported media type"
        case .accountExistsUnverified: "Unverified account holds this address"
        case .emailNotVerified: "Email not verified"
        case .sharingNeedsInvitation: "Sharing needs an accepted invitation"
        }
    }
}
