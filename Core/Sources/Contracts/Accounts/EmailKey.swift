import Foundation

/// The one normal form of an email address used wherever addresses are compared: the accounts
/// service's sign-in key (`users.email_key`), invitation matching, and the gateway's login and
/// reset throttles. Spaces and control characters around it are dropped, then Unicode NFKC,
/// then case folding — so `" V@X.com\t"`, `"v@x.com"` and `"ｖ@ｘ.com"` are one key and
/// cannot dodge a lockout or claim an address twice.
public enum EmailKey {
    /// The normal form of `raw` (empty when `raw` is only spaces).
    public static func normalize(_ raw: String) -> String {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
        return trimmed.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive], locale: nil)
            .trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
    }
}
