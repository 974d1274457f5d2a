/// The slots of push sends, and who may hold them (issue 74): APNs and FCM share one lane;
/// webhooks — endpoints of the users' choosing, any of which may answer slowly on purpose — have
/// a lane of their own, and within it a cap per account and per destination host. A webhook
/// that finds its lane, its account or its destination full is put back for a moment rather
/// than waiting in a slot (``Decision/deferred(_:)``), so no account and no receiver can hold
/// the slots another user's push needs.
///
/// Pure: the delivery worker asks before each send and tells after it; nothing here waits.
public struct SendLanes: Sendable {
    /// How many sends each lane and principal may hold at once.
    public struct Limits: Sendable, Equatable {
        /// APNs and FCM sends in flight.
        public var providers: Int
        /// Webhook sends in flight, all accounts together.
        public var webhooks: Int
        /// Webhook sends in flight for one account.
        public var webhooksPerAccount: Int
        /// Webhook sends in flight to one host.
        public var webhooksPerDestination: Int

        public init(providers: Int, webhooks: Int, webhooksPerAccount: Int, webhooksPerDestination: Int) {
            self.providers = max(1, providers)
            self.webhooks = max(1, webhooks)
            self.webhooksPerAccount = max(1, webhooksPerAccount)
            self.webhooksPerDestination = max(1, webhooksPerDestination)
        }
    }

    /// Where a send goes.
    public enum Lane: Sendable, Hashable {
        /// APNs or FCM.
        case provider
        /// A webhook of `account` to the host `destination` (lower-cased).
        case webhook(account: String, destination: String)
    }

    /// Why a webhook was put back.
    public enum Reason: String, Sendable {
        case webhooks, account, destination
    }

    /// The answer to ``admit(_:)``.
    public enum Decision: Sendable, Equatable {
        /// Send it now: a slot is taken (give it back with ``release(_:)``).
        case send
        /// The provider lane is full: wait for a send to finish, in order.
        case full
        /// Put it back for a moment: its lane, account or destination is full.
        case deferred(Reason)
    }

    public let limits: Limits
    public private(set) var providersInFlight = 0
    public private(set) var webhooksInFlight = 0
    private var byAccount: [String: Int] = [:]
    private var byDestination: [String: Int] = [:]

    public init(limits: Limits) {
        self.limits = limits
    }

    /// Sends in flight in every lane.
    public var inFlight: Int { providersInFlight + webhooksInFlight }

    /// Webhook sends in flight for `account` (tests, metrics).
    public func webhooks(of account: String) -> Int { byAccount[account, default: 0] }

    /// Webhook sends in flight to `destination` (tests, metrics).
    public func webhooks(to destination: String) -> Int { byDestination[destination, default: 0] }

    /// Takes a slot for a send in `lane`, or says why not.
    public mutating func admit(_ lane: Lane) -> Decision {
        switch lane {
        case .provider:
            guard providersInFlight < limits.providers else { return .full }
            providersInFlight += 1
            return .send
        case .webhook(let account, let destination):
            guard webhooksInFlight < limits.webhooks else { return .deferred(.webhooks) }
            guard byAccount[account, default: 0] < limits.webhooksPerAccount else { return .deferred(.account) }
            guard byDestination[destination, default: 0] < limits.webhooksPerDestination else { return .deferred(.destination) }
            webhooksInFlight += 1
            byAccount[account, default: 0] += 1
            byDestination[destination, default: 0] += 1
            return .send
        }
    }

    /// Gives back the slot a finished send in `lane` held.
    public mutating func release(_ lane: Lane) {
        switch lane {
        case .provider:
            providersInFlight = max(0, providersInFlight - 1)
        case .webhook(let account, let destination):
            webhooksInFlight = max(0, webhooksInFlight - 1)
            Self.decrement(&byAccount, account)
            Self.decrement(&byDestination, destination)
        }
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        guard let n = counts[key] else { return }
        counts[key] = n > 1 ? n - 1 : nil
    }
}
