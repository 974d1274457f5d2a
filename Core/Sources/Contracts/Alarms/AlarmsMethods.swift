import Foundation
import Wire

/// The requests the alarms service answers.
public enum AlarmsMethods {
    /// Imports up to 500 alarms of the actor, each idempotent by its id.
    public struct BatchImport: RPCMethod {
        public typealias Request = AlarmImport
        public typealias Response = AlarmImportResult
        public static let type = "alarms.batch-import"
    }

    public struct Create: RPCMethod {
        public typealias Request = AlarmCreate
        public typealias Response = AlarmCreated
        public static let type = "alarms.create"
    }

    public struct Get: RPCMethod {
        public typealias Request = AlarmRef
        public typealias Response = Alarm
        public static let type = "alarms.get"
        /// Invitations (the invited alarm) and billing (the snoozed alarm) read it as the user.
        public static let access = MethodAccess.edge(and: "invitations", "billing")
    }

    public struct Update: RPCMethod {
        public typealias Request = AlarmPatch
        public typealias Response = Alarm
        public static let type = "alarms.update"
    }

    /// Takes a member off a shared alarm: its owner removes anyone, a member leaves
    /// (`userId` "me" or their own id). Their devices and live streams are told (`alarm_changed`).
    public struct RemoveMember: RPCMethod {
        public struct Request: Codable, Sendable {
            public var id: String
            public var userId: String
            public init(id: String, userId: String) {
                self.id = id
                self.userId = userId
            }
        }
        public typealias Response = Alarm
        public static let type = "alarms.remove-member"
    }

    public struct Delete: RPCMethod {
        public typealias Request = AlarmRef
        public typealias Response = Alarm
        public static let type = "alarms.delete"
    }

    public struct List: RPCMethod {
        public typealias Request = AlarmListQuery
        public typealias Response = AlarmPage
        public static let type = "alarms.list"
    }

    public struct Feed: RPCMethod {
        public typealias Request = AlarmFeedQuery
        public typealias Response = AlarmFeedPage
        public static let type = "alarms.feed"
    }

    public struct Complete: RPCMethod {
        public typealias Request = CompletionCreate
        public typealias Response = CompletionRecorded
        public static let type = "alarms.complete"
    }

    public struct Completions: RPCMethod {
        public typealias Request = CompletionQuery
        public typealias Response = CompletionPage
        public static let type = "alarms.completions"
    }

    public struct CompletionsCSV: RPCMethod {
        public typealias Request = CompletionQuery
        public typealias Response = TextDocument
        public static let type = "alarms.completions-csv"
    }

    /// One alarm's iCalendar feed (`alarmId` set) or all the caller's alarms (empty).
    public struct Calendar: RPCMethod {
        public struct Request: Codable, Sendable {
            public var alarmId: String?
            public init(alarmId: String? = nil) { self.alarmId = alarmId }
        }
        public typealias Response = TextDocument
        public static let type = "alarms.calendar"
    }

    /// Internal: sets a user's tier while billing does not exist or for operators
    /// (`chronirctl tier set`). Not routed by the gateway.
    public struct SetTier: RPCMethod {
        public struct Request: Codable, Sendable {
            public var userId: String
            public var tier: String
            public init(userId: String, tier: String) {
                self.userId = userId
                self.tier = tier
            }
        }
        public struct Response: Codable, Sendable {
            public var tier: String
            /// Alarms deactivated by a downgrade.
            public var deactivated: [String]
            public init(tier: String, deactivated: [String]) {
                self.tier = tier
                self.deactivated = deactivated
            }
        }
        public static let type = "alarms.admin.set-tier"
        public static let access = MethodAccess.operatorOnly
    }
}

extension AlarmsMethods {
    /// `POST /v1/alarms/{id}/snooze {minutes?}`: re-fire the pending occurrence later.
    public struct Snooze: RPCMethod {
        public struct Request: Codable, Sendable {
            public var alarmId: String
            /// The length: one of the tier's lengths or, on Plus, any custom length of
            /// 1–10 080 minutes; left out, the alarm's `snoozeDurationMinutes` (the nearest
            /// length the tier allows when it allows not that one).
            public var minutes: Int?
            public init(alarmId: String, minutes: Int? = nil) {
                self.alarmId = alarmId
                self.minutes = minutes
            }
        }
        public struct Response: Codable, Sendable {
            public var alarm: Alarm
            public var occurrenceAt: Date
            public var refireAt: Date
            public var snoozeCount: Int
            public init(alarm: Alarm, occurrenceAt: Date, refireAt: Date, snoozeCount: Int) {
                self.alarm = alarm
                self.occurrenceAt = occurrenceAt
                self.refireAt = refireAt
                self.snoozeCount = snoozeCount
            }
        }
        public static let type = "alarms.snooze"
    }

    /// What snoozing the alarm's current occurrence would be, asked before snoozing (the firing
    /// screen shows a paid snooze's price on its buttons rather than meeting a 402).
    public struct SnoozeOptions: RPCMethod {
        public struct Request: Codable, Sendable {
            public var alarmId: String
            public init(alarmId: String) { self.alarmId = alarmId }
        }
        public struct Response: Codable, Sendable, Equatable {
            /// The occurrence a snooze applies to (the pending one), nil when there is none.
            public var occurrenceAt: Date?
            /// Snoozes of that occurrence so far.
            public var snoozeCount: Int
            /// Snoozes allowed per occurrence (3, or 5 under an accountability policy).
            public var maxSnoozes: Int
            /// Lengths the caller's tier may choose, in minutes.
            public var minutes: [Int]
            /// The length a snooze without `minutes` takes (the alarm's, within the tier).
            public var defaultMinutes: Int = 60
            /// Whether the caller's tier may ask for any length of 1–10 080 minutes (Plus).
            public var customAllowed: Bool = false
            /// Whether one more snooze is possible at all now.
            public var available: Bool
            /// Set when the next snooze is paid: its price and the consumable that buys it.
            public var costCents: Int?
            public var productId: String?
            public init(occurrenceAt: Date?, snoozeCount: Int, maxSnoozes: Int, minutes: [Int], available: Bool, costCents: Int?, productId: String?) {
                self.occurrenceAt = occurrenceAt
                self.snoozeCount = snoozeCount
                self.maxSnoozes = maxSnoozes
                self.minutes = minutes
                self.available = available
                self.costCents = costCents
                self.productId = productId
            }
            public func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(occurrenceAt, forKey: .occurrenceAt)
                try c.encode(snoozeCount, forKey: .snoozeCount)
                try c.encode(maxSnoozes, forKey: .maxSnoozes)
                try c.encode(minutes, forKey: .minutes)
                try c.encode(defaultMinutes, forKey: .defaultMinutes)
                try c.encode(customAllowed, forKey: .customAllowed)
                try c.encode(available, forKey: .available)
                try c.encode(costCents, forKey: .costCents)
                try c.encode(productId, forKey: .productId)
            }
        }
        public static let type = "alarms.snooze-options"
    }
}

extension AlarmsMethods {
    /// `GET /v1/sounds`: the alarm tones, each marked available or not for the caller's tier.
    public struct Sounds: RPCMethod {
        public typealias Request = Empty
        public typealias Response = SoundList
        public static let type = "alarms.sounds"
    }
}
