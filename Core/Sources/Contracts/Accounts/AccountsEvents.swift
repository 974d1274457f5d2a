import Foundation
import Wire

/// Events of the `accounts` stream.
public enum AccountsEvents {
    /// A user signed up or changed their profile (name, time zone, tier).
    public static let userUpserted = TypedEvent<UserUpserted>("accounts.user-upserted")
    /// A user deleted their account: every service removes what it holds of them.
    public static let userDeleted = TypedEvent<UserDeleted>("accounts.user-deleted")
    /// A device was registered or its push token changed.
    public static let deviceUpserted = TypedEvent<DeviceUpserted>("accounts.device-upserted")
    /// A device was removed.
    public static let deviceRemoved = TypedEvent<DeviceRemoved>("accounts.device-removed")
    /// A session was ended (logout, refresh-token reuse, account deletion).
    public static let sessionRevoked = TypedEvent<SessionRevoked>("accounts.session-revoked")

    /// Payload of ``userUpserted``.
    public struct UserUpserted: Codable, Sendable {
        public var uid: String
        public var email: String
        public var displayName: String
        public var timezone: String
        public var tier: Tier
        /// Whether the user proved `email` (absent from events published before it existed:
        /// read as not proven). Consumers that act on an address act only on a proven one.
        public var emailVerified: Bool?
        /// The length new alarms snooze for when created without one (absent before 0.3).
        public var defaultSnoozeMinutes: Int?
        /// Whether the user agreed to product analytics (absent before 0.3: read as not).
        public var analyticsConsent: Bool?
        /// The user's home zone (nil: `timezone`); fixed alarms in the previous one follow it.
        public var homeTimezone: String?
        /// Set once, when a password reset proved the address of an account that had not proved
        /// it: the owner took the account back, and what was made in it before this time (by
        /// whoever held it unproven) is removed — calendar feeds by alarms, pending invitations by
        /// invitations (devices, sessions and identities by accounts itself). Absent otherwise,
        /// and from builds before 0.5.
        public var takenBackAt: Date?
        public init(uid: String, email: String, displayName: String, timezone: String, tier: Tier, emailVerified: Bool? = nil,
                    defaultSnoozeMinutes: Int? = nil, analyticsConsent: Bool? = nil, homeTimezone: String? = nil, takenBackAt: Date? = nil) {
            self.takenBackAt = takenBackAt
            self.defaultSnoozeMinutes = defaultSnoozeMinutes
            self.analyticsConsent = analyticsConsent
            self.homeTimezone = homeTimezone
            self.uid = uid
            self.email = email
            self.displayName = displayName
            self.timezone = timezone
            self.tier = tier
            self.emailVerified = emailVerified
        }
    }

    /// Payload of ``userDeleted``.
    public struct UserDeleted: Codable, Sendable {
        public var uid: String
        public var email: String
        public init(uid: String, email: String) {
            self.uid = uid
            self.email = email
        }
    }

    /// Payload of ``deviceUpserted``.
    public struct DeviceUpserted: Codable, Sendable {
        public var uid: String
        public var device: Device
        public init(uid: String, device: Device) {
            self.uid = uid
            self.device = device
        }
    }

    /// Payload of ``deviceRemoved``.
    public struct DeviceRemoved: Codable, Sendable {
        public var uid: String
        public var deviceId: String
        public init(uid: String, deviceId: String) {
            self.uid = uid
            self.deviceId = deviceId
        }
    }

    /// Payload of ``sessionRevoked``.
    public struct SessionRevoked: Codable, Sendable {
        public var uid: String
        public var session: String
        public init(uid: String, session: String) {
            self.uid = uid
            self.session = session
        }
    }
}
