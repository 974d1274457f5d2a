import Foundation
import Logging

/// Deletes inbox entries, finished deliveries and attempts older than the retention
/// (`CHRONIR_INBOX_RETENTION`, default 30 days); run hourly.
struct RetentionSweeper: Sendable {
    let store: NotificationStore
    let retention: Duration
    let logger: Logger

    func sweep() async throws {
        let seconds = Double(retention.components.seconds)
        let inbox = try await store.deleteInbox(olderThanSeconds: seconds)
        try await store.deleteFinishedDeliveries(olderThanSeconds: seconds)
        try await store.deleteAttempts(olderThanSeconds: seconds)
        if inbox > 0 { logger.info("retention: removed \(inbox) inbox entries") }
    }
}
