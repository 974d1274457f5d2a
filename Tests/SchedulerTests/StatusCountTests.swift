import LoadFixtures
import Foundation
import Persistence
import Support
import Testing
@testable import SchedulerService

/// The status page's counts against a real PostgreSQL: the timers due within the horizon are
/// counted per partition (`timers_partition_due`), across every partition, owned or not.
extension FencingTests {
    @Test("the status counts every timer of every partition, and those due within the horizon")
    func statusCounts() async throws {
        try await withScheduler("status-counts") { db in
            let all = (0..<256).map(Int32.init)
            // Half the partitions owned, half never taken: the count covers both.
            try await db.query("""
                INSERT INTO leases (partition, owner, epoch, expires_at)
                SELECT p, CASE WHEN p % 2 = 0 THEN 'A' END, 1, now() + interval '1 minute' FROM unnest(\(all)::int[]) AS p
                """)
            let now = Date()
            // The default horizon is an hour: 40 timers inside it (one overdue), 25 beyond it.
            let inside = (0..<40).map { now.addingTimeInterval(Double($0) * 60 - 30) }
            let beyond = (0..<25).map { now.addingTimeInterval(7200 + Double($0) * 60) }
            try await SchedulerLoad(database: db).seed(prefix: "status", dues: inside + beyond)
            let partitions = Set(try await db.query("SELECT partition FROM timers").all(Int32.self))
            #expect(partitions.count > 20, "the seed should spread over many partitions")
            let counts = try await store(db, instance: "A").statusCounts()
            #expect(counts.timers == 65)
            #expect(counts.timersInHorizon == 40)
            #expect(counts.unownedPartitions == 128)
        }
    }
}
