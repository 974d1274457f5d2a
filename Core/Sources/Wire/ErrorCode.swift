/// The application error codes of `chronir-api.md` §12.1, followed by the codes this backend
/// adds (new codes go at the end; a code is never reused).
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    case alarmLimitReached = "CA001"
    case tierRequired = "CA002"
    case groupMemberLimit = "CA003"
    case invitationExpired = "CA004"
    case invitationAlreadyAccepted = "CA005"
    case alarmNotFound = "CA006"
    case permissionDenied = "CA007"
    case scheduleInvalid = "CA008"
    case photoTooLarge = "CA009"
    case syncConflict = "CA010"
    case networkUnavailable = "CA011"
    case authRequired = "CA012"
    case subscriptionExpired = "CA013"
    case osAlarmPermissionDenied = "CA014"
    case notificationPermissionDenied = "CA015"
    // Added by the backend.
    case validationFailed = "CA016"
    case notFound = "CA017"
    case alreadyExists = "CA018"
    case rateLimited = "CA019"
    case messageInvalid = "CA020"
    case deadlineExceeded = "CA021"
    case serviceUnavailable = "CA022"
    case internalError = "CA023"
    case payloadTooLarge = "CA024"
    case invalidCredentials = "CA025"
    case snoozeLimitReached = "CA026"
    case receiptInvalid = "CA027"
    case invitationNotPending = "CA028"
    case paymentRequired = "CA029"
    case callerNotAllowed = "CA030"
    case methodNotAllowed = "CA031"
    case unsupportedMediaType = "CA032"
    /// A provider sign-in found an account holding the address that never proved it: sign in
    /// with that account's password (or reset it) and link the provider from its settings.
    case accountExistsUnverified = "CA033"
    /// The request needs an address the caller proved (answer the verification mail first).
    case emailNotVerified = "CA034"
    /// `sharedWith` named people who never accepted an invitation to the alarm: sharing is by
    /// consent, through `POST /v1/invitations` (`details.field`, `details.userIds`).
    case sharingNeedsInvitation = "CA035"

    /// The upper-case name used in documentation and messages.
    public var name: String {
        switch self {
        case .alarmLimitReached: "ALARM_LIMIT_REACHED"
        case .tierRequired: "TIER_REQUIRED"
        case .groupMemberLimit: "GROUP_MEMBER_LIMIT"
        case .invitationExpired: "INVITATION_EXPIRED"
        case .invitationAlreadyAccepted: "INVITATION_ALREADY_ACCEPTED"
        case .alarmNotFound: "ALARM_NOT_FOUND"
        case .permissionDenied: "PERMISSION_DENIED"
        case .scheduleInvalid: "SCHEDULE_INVALID"
        case .photoTooLarge: "PHOTO_TOO_LARGE"
        case .syncConflict: "SYNC_CONFLICT"
        case .networkUnavailable: "NETWORK_UNAVAILABLE"
        case .authRequired: "AUTH_REQUIRED"
        case .subscriptionExpired: "SUBSCRIPTION_EXPIRED"
        case .osAlarmPermissionDenied: "OS_ALARM_PERMISSION_DENIED"
        case .notificationPermissionDenied: "NOTIFICATION_PERMISSION_DENIED"
        case .validationFailed: "VALIDATION_FAILED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .rateLimited: "RATE_LIMITED"
        case .messageInvalid: "MESSAGE_INVALID"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .serviceUnavailable: "SERVICE_UNAVAILABLE"
        case .internalError: "INTERNAL_ERROR"
        case .payloadTooLarge: "PAYLOAD_TOO_LARGE"
        case .invalidCredentials: "INVALID_CREDENTIALS"
        case .snoozeLimitReached: "SNOOZE_LIMIT_REACHED"
        case .receiptInvalid: "RECEIPT_INVALID"
        case .invitationNotPending: "INVITATION_NOT_PENDING"
        case .paymentRequired: "PAYMENT_REQUIRED"
        case .callerNotAllowed: "CALLER_NOT_ALLOWED"
        case .methodNotAllowed: "METHOD_NOT_ALLOWED"
        case .unsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE"
        case .accountExistsUnverified: "ACCOUNT_EXISTS_UNVERIFIED"
        case .emailNotVerified: "EMAIL_NOT_VERIFIED"
        case .sharingNeedsInvitation: "SHARING_NEEDS_INVITATION"
        }
    }

    /// The HTTP status the gateway answers with for this code.
    public var httpStatus: Int {
        switch self {
        case .alarmLimitReached, .tierRequired, .permissionDenied, .subscriptionExpired, .callerNotAllowed, .emailNotVerified: 403
        case .groupMemberLimit, .invitationAlreadyAccepted, .syncConflict, .alreadyExists, .snoozeLimitReached, .invitationNotPending,
             .accountExistsUnverified: 409
        case .invitationExpired: 410
        case .paymentRequired: 402
        case .methodNotAllowed: 405
        case .unsupportedMediaType: 415
        case .alarmNotFound, .notFound: 404
        case .scheduleInvalid, .validationFailed, .messageInvalid, .receiptInvalid, .sharingNeedsInvitation,
             .osAlarmPermissionDenied, .notificationPermissionDenied: 400
        case .photoTooLarge, .payloadTooLarge: 413
        case .networkUnavailable, .serviceUnavailable: 503
        case .authRequired, .invalidCredentials: 401
        case .rateLimited: 429
        case .deadlineExceeded: 504
        case .internalError: 500
        }
    }
}
