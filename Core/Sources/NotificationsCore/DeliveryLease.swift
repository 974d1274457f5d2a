/// A claimed delivery's lease (issue 74): a worker claims due rows by moving their next attempt
/// `lease` ahead; another worker may claim a row again once that passes. A send must therefore
/// both start and end inside the lease, or two sends of one row could be open at once. Sends
/// are bounded (``sendBound``: the longest a provider's send may take, its deadline and the
/// lookups before it), so the rule is on when a send may still start.
public enum DeliveryLease {
    /// Whether a send that takes at most `sendBound` may start on a row claimed `age` ago under
    /// a lease of `lease`: it must end before the lease does. A row that may not is put back
    /// (its attempt not counted) rather than sent late.
    public static func maySend(age: Duration, lease: Duration, sendBound: Duration) -> Bool {
        age >= .zero && age + sendBound < lease
    }
}
