/// One token taken from one bucket: the bucket's name, whose bucket it is, and its size.
public struct ThrottleTake: Sendable, Equatable {
    /// The kind of bucket (`signups`, `alarmEdits`, …).
    public var bucket: String
    /// Whose: an address's limit key, its /48, an account, an email key, an alarm editor.
    public var key: String
    /// The bucket's size, refilled evenly over an hour.
    public var perHour: Int

    public init(_ bucket: String, _ key: String, perHour: Int) {
        self.bucket = bucket
        self.key = key
        self.perHour = perHour
    }
}

/// A take, and what the caller is told when its bucket is empty.
public struct ThrottleStep: Sendable, Equatable {
    public var take: ThrottleTake
    public var refusal: String

    public init(_ take: ThrottleTake, refusal: String) {
        self.take = take
        self.refusal = refusal
    }
}

/// A request refused by a limit: the message, and the whole seconds until a token is there
/// (the gateway's 429 `CA019` with `Retry-After`).
public struct ThrottleRefusal: Error, Sendable, Equatable {
    public var message: String
    public var retryAfter: Int

    public init(_ message: String, retryAfter: Int) {
        self.message = message
        self.retryAfter = retryAfter
    }
}

/// What a limited request asks of the throttle. Each admission is a list of takes
/// (``steps(_:)``), decided in order by ``ThrottleAdmission/decide(_:take:refund:)``: the first
/// empty bucket refuses, and the tokens the steps before it took are given back (the request
/// was not served). Where the counts live is the shell's (the gateway's memory, or accounts'
/// rows shared by every replica); the keys, the sizes and the order are decided here.
///
/// An address is counted under its limit key (IPv6 by /64) and, for IPv6, under its /48 too,
/// with ``ThrottleLimits/ipv6PrefixShare`` times the size: a /48 holds 65 536 /64s.
public enum ThrottleAdmission: Sendable, Equatable {
    case signup(address: String)
    /// Refunded when the notification is applied: the limit bounds refused ones.
    case storeNotification(address: String)
    /// Refunded when the token is right.
    case opsToken(address: String)
    /// Per editor and alarm first, then per editor: one member cannot use up the owner's edits.
    case alarmEdit(user: String, alarm: String)
    case export(user: String)
    case alarmImport(user: String)
    case analytics(user: String)
    /// Refunded when the token was good: only made-up, used or expired tokens use it up.
    case tokenConfirm(address: String)
    /// `email` in its ``EmailKey`` form; the same answer whether or not it has an account.
    case resetMail(email: String)
    case verificationMail(user: String)
    /// Per account, then per address (a password hash each).
    case passwordLink(user: String, address: String)
    case storeVerification(user: String)
    /// The failed logins of an IPv6 /48 (the per-address back-off is ``ThrottleRules``'s);
    /// refunded by a login that succeeds. Empty for IPv4.
    case loginPrefix(address: String)

    /// The takes of this admission, in the order they are taken.
    public func steps(_ limits: ThrottleLimits) -> [ThrottleStep] {
        switch self {
        case .signup(let address):
            return Self.byAddress("signups", address, limits.signupsPerAddressPerHour, limits, "too many sign-ups from this address")
        case .storeNotification(let address):
            return Self.byAddress("storeNotifications", address, limits.storeNotificationsRefusedPerAddressPerHour, limits,
                                  "too many refused store notifications from this address")
        case .opsToken(let address):
            return Self.byAddress("opsToken", address, limits.opsTokenFailuresPerAddressPerHour, limits,
                                  "too many wrong operator tokens from this address")
        case .alarmEdit(let user, let alarm):
            return [ThrottleStep(ThrottleTake("alarmEdits", "alarm:\(alarm):\(user)", perHour: limits.alarmEditsPerAlarmPerHour),
                                 refusal: "too many edits of this alarm; try again later"),
                    ThrottleStep(ThrottleTake("alarmEdits", "user:" + user, perHour: limits.alarmEditsPerUserPerHour),
                                 refusal: "too many alarm edits from this account; try again later")]
        case .export(let user):
            return [ThrottleStep(ThrottleTake("exports", user, perHour: limits.exportsPerUserPerHour), refusal: "too many exports of this account")]
        case .alarmImport(let user):
            return [ThrottleStep(ThrottleTake("imports", user, perHour: limits.importsPerUserPerHour),
                                 refusal: "too many alarm imports for this account")]
        case .analytics(let user):
            return [ThrottleStep(ThrottleTake("analytics", user, perHour: limits.analyticsBatchesPerUserPerHour),
                                 refusal: "too many analytics batches from this account")]
        case .tokenConfirm(let address):
            return Self.byAddress("confirms", address, limits.tokenConfirmsPerAddressPerHour, limits,
                                  "too many token confirmations from this address")
        case .resetMail(let email):
            return [ThrottleStep(ThrottleTake("resetMails", email, perHour: limits.resetMailsPerEmailPerHour),
                                 refusal: "too many password-reset mails to this address; try again later")]
        case .verificationMail(let user):
            return [ThrottleStep(ThrottleTake("verificationMails", user, perHour: limits.verificationMailsPerUserPerHour),
                                 refusal: "too many verification mails for this account; try again later")]
        case .passwordLink(let user, let address):
            let refusal = "too many attempts to set a password; try again later"
            return [ThrottleStep(ThrottleTake("links", "user:" + user, perHour: limits.passwordLinksPerHour), refusal: refusal)]
                + Self.byAddress("linksByAddress", address, limits.passwordLinksPerHour, limits, refusal)
        case .storeVerification(let user):
            return [ThrottleStep(ThrottleTake("store", user, perHour: limits.storeVerificationsPerUserPerHour),
                                 refusal: "too many store verifications for this account; try again later")]
        case .loginPrefix(let address):
            guard let prefix = ClientAddresses.prefix48(of: address) else { return [] }
            return [ThrottleStep(ThrottleTake("logins48", prefix, perHour: limits.addressFailuresFree * limits.ipv6PrefixShare),
                                 refusal: "too many failed logins from this network; try again later")]
        }
    }

    /// An address's take and, for IPv6, its /48's.
    private static func byAddress(_ bucket: String, _ address: String, _ perHour: Int, _ limits: ThrottleLimits,
                                  _ refusal: String) -> [ThrottleStep] {
        var steps = [ThrottleStep(ThrottleTake(bucket, address, perHour: perHour), refusal: refusal)]
        if let prefix = ClientAddresses.prefix48(of: address) {
            steps.append(ThrottleStep(ThrottleTake(bucket, prefix, perHour: perHour * limits.ipv6PrefixShare), refusal: refusal))
        }
        return steps
    }

    /// Takes `steps` in order with `take` (nil: taken; else the seconds to wait). The first that
    /// must wait refuses: the steps before it are given back with `refund`, newest first, and
    /// the refusal names the step's message and wait. Nil: every step was taken.
    public static func decide(_ steps: [ThrottleStep], take: (ThrottleTake) async -> Int?,
                              refund: (ThrottleTake) async -> Void) async -> ThrottleRefusal? {
        for (index, step) in steps.enumerated() {
            guard let wait = await take(step.take) else { continue }
            for earlier in steps[..<index].reversed() { await refund(earlier.take) }
            return ThrottleRefusal(step.refusal, retryAfter: wait)
        }
        return nil
    }
}
