import Foundation
import Wire

/// A page of a user's data export (`GET /v1/me/export`): one section's rows, as JSON, and where
/// the next page starts (nil: this service has nothing more).
public struct ExportPage: Codable, Sendable {
    /// The section's name in the export document (unique across services).
    public var section: String
    public var items: [JSONValue]
    public var next: String?

    public init(section: String, items: [JSONValue], next: String?) {
        self.section = section
        self.items = items
        self.next = next
    }
}

/// Where an export page starts (`after` from the previous page; nil: the first).
public struct ExportRequest: Codable, Sendable {
    public var after: String?
    public init(after: String? = nil) { self.after = after }
}

/// The export request of each service that holds user data (actor: the user).
public enum ExportMethods {
    public struct Accounts: RPCMethod {
        public typealias Request = ExportRequest
        public typealias Response = ExportPage
        public static let type = "accounts.export"
    }
    public struct Alarms: RPCMethod {
        public typealias Request = ExportRequest
        public typealias Response = ExportPage
        public static let type = "alarms.export"
    }
    public struct Invitations: RPCMethod {
        public typealias Request = ExportRequest
        public typealias Response = ExportPage
        public static let type = "invitations.export"
    }
    public struct Notifications: RPCMethod {
        public typealias Request = ExportRequest
        public typealias Response = ExportPage
        public static let type = "notifications.export"
    }
    public struct Billing: RPCMethod {
        public typealias Request = ExportRequest
        public typealias Response = ExportPage
        public static let type = "billing.export"
    }
}
