/// Whether the running task holds a database transaction (set by `Database.transaction`), so a
/// call to another service made under it can be refused or reported (issue 60). Such a call
/// keeps the transaction's pool connection and its row locks for as long as the other service
/// takes to answer: everyone waiting for those rows, and for the pool, waits on that service.
/// The shell reads what it needs first, or asks afterwards.
public enum TransactionScope {
    /// What holds the transaction (a label for messages); nil outside one.
    @TaskLocal public static var holder: String?
}

/// What an RPC client does with a call made inside a database transaction
/// (`CHRONIR_CALLS_IN_TRANSACTIONS`): `warn` logs it and makes the call (the default), `refuse`
/// answers `CA023` without calling (the tests run so, to find every such call).
public enum TransactionCallPolicy: String, Sendable {
    case warn, refuse
}
