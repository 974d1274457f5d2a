import Foundation
import Logging
import Persistence

/// Deletes inbox entries, finished deliveries and attempts older than the retention
/// (`CHRONIR_INBOX_RETENTION`, default 30 days); run hourly.
struct RetentionSweeper: Sendable {
    let database: Database
    let retention: Duration
    let logger: Logger

    func sweep() async throws {
        let seconds = Double(retention.components.seconds)
        let inbox = try await database.query("""
            WITH gone AS (DELETE FROM inbox WHERE created_at < now() - make_interval(secs => \(seconds)) RETURNING 1) SELECT count(*)::int FROM gone
            """).first(Int.self) ?? 0
        try await database.query("""
            DELETE FROM deliveries WHERE state <> 'pending' AND finished_at < now() - make_interval(secs => \(seconds))
            """)
        try await database.query("DELETE FROM attempts WHERE at < now() - make_interval(secs => \(seconds))")
        if inbox > 0 { logger.info("retention: removed \(inbox) inbox entries") }
    }
}
