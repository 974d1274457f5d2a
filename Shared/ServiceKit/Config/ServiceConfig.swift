/// A service's settings, typed: every `CHRONIR_*` variable the service reads (beyond the ones
/// every service reads in ``ServiceRuntime``), parsed and validated at once.
///
/// `main` reads it before anything connects (``ServiceHost/main(service:migrations:config:build:)``):
/// a malformed value stops the start at once with a message naming the variable, instead of after
/// the database became reachable and the migrations ran.
public protocol ServiceConfig: Sendable {
    /// Reads and validates every setting; throws ``ServiceEnvironment/Invalid`` naming the
    /// variable and what is wrong with it.
    init(environment: ServiceEnvironment) throws
}
