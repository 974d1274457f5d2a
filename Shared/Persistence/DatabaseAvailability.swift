import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Whether PostgreSQL answers, as a probe sees it every second. While it does not, the
/// service's queries fail at once with ``DatabaseUnavailable`` (answered `CA022` with
/// `Retry-After`) instead of waiting in the pool for a connection that cannot come; when the
/// probe gets an answer again, queries flow as before (the pool reconnects by itself).
public final class DatabaseAvailability: Sendable {
    private let up = Atomic<Bool>(true)

    public init() {}

    /// Whether the last probe got an answer.
    public var isUp: Bool { up.load(ordering: .relaxed) }

    /// Records a probe's outcome; true when it changed.
    func record(_ answered: Bool) -> Bool {
        up.exchange(answered, ordering: .relaxed) != answered
    }

    /// Whether `error` means PostgreSQL could not be reached or went away (as opposed to a
    /// statement it refused): connection failures, a closed or lost connection, and the
    /// server's own shutdown and connection codes (SQLSTATE classes 08 and 57P).
    public static func isOutage(_ error: any Error) -> Bool {
        if error is DatabaseUnavailable || error is DeadlineExceeded || error is ConnectionClosedUnderTransaction { return true }
        guard let e = error as? PSQLError else { return false }
        switch e.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            let state = e.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P")
        default:
            return false
        }
    }
}

/// Thrown instead of querying while PostgreSQL is unreachable.
public struct DatabaseUnavailable: Error, CustomStringConvertible {
    public var description: String { "PostgreSQL is unreachable" }
    public init() {}
}

extension Database {
    /// Probes the database every `interval` until cancelled, giving each probe `timeout`, and
    /// keeps ``availability`` current (logging each change).
    public func probeAvailability(interval: Duration = .seconds(1), timeout: Duration = .seconds(2),
                                  onProbe: (@Sendable (Bool) -> Void)? = nil) async {
        while !Task.isCancelled {
            let answered = await probe(timeout: timeout)
            onProbe?(answered)
            if availability.record(answered) {
                if answered {
                    logger.notice("PostgreSQL answers again; serving")
                } else {
                    logger.error("PostgreSQL does not answer; requests get CA022 until it does", metadata: ["database": "\(config.redacted)"])
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// One `SELECT 1`, given up after `timeout` (a query waiting for a pool connection that
    /// cannot be made does not end by itself).
    private func probe(timeout: Duration) async -> Bool {
        do {
            try await withDeadline(timeout) { [client, logger] in _ = try await client.query("SELECT 1", logger: logger) }
            return true
        } catch {
            return false
        }
    }
}
