import Foundation
import Support
import Testing

/// Scheduler replicas as separate processes on a real PostgreSQL: partitions shared, a replica
/// killed mid-stream, a paused replica fenced out.
@Suite("Scheduler replicas across processes", .serialized)
struct FailoverTests {
    func withCluster(_ label: String, replicas: Int, environment: [String: String] = [:],
                     _ body: (SchedulerCluster) async throws -> Void) async throws {
        let cluster = try await SchedulerCluster(label: label, replicas: replicas, environment: environment)
        do {
            try cluster.startStandIns()
            try await body(cluster)
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }

    @Test("3 replicas share 256 partitions; one SIGKILLed mid-stream: every fire recorded and pushed once; ownership settles within 10 s")
    func killOneReplica() async throws {
        try await withCluster("sched-kill", replicas: 3) { cluster in
            for i in 0..<3 { try cluster.startReplica(i) }
            let balanced = await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                let o = (try? await cluster.owners()) ?? [:]
                return o.count == 3 && o.values.reduce(0, +) == 256 && o.values.allSatisfy { $0 <= 86 }
            }
            let initial = try await cluster.owners()
            #expect(balanced, "partitions: \(initial)\n\(cluster.logs)")

            // 1 200 fires spread over 12 s, starting 5 s from now.
            let n = 1200
            let start = Date().addingTimeInterval(5)
            let states = (0..<n).map { alarmState("kill-\($0)", at: start.addingTimeInterval(Double($0) * 0.01)) }
            try await cluster.publish(states)

            // Mid-stream, replica 1 dies without a word.
            try await Task.sleep(until: .now + .seconds(start.addingTimeInterval(5).timeIntervalSinceNow), clock: .continuous)
            let victimShare = (try await cluster.owners())["replica-1"] ?? 0
            #expect(victimShare > 0)
            cluster.replica(1).kill9()
            let killed = ContinuousClock.now
            let settled = await eventually(timeout: .seconds(20), every: .milliseconds(100)) {
                let o = (try? await cluster.owners()) ?? [:]
                return o["replica-1"] == nil && o.count == 2 && o.values.reduce(0, +) == 256
            }
            let settleTime = killed.duration(to: .now)
            let after = try await cluster.owners()
            #expect(settled, "partitions after the kill: \(after)")
            #expect(settleTime <= .seconds(10), "ownership settled after \(settleTime)")

            let recorded = await eventually(timeout: .seconds(60), every: .milliseconds(200)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE kind = 'fire'")) == n
            }
            let fires = try await cluster.count("scheduler", "SELECT count(*)::int FROM fires")
            #expect(recorded, "fires: \(fires)\n\(cluster.logs)")
            let pushed = await eventually(timeout: .seconds(60), every: .milliseconds(200)) {
                (try? await cluster.count("notifications", "SELECT count(*)::int FROM received")) == n
            }
            let received = try await cluster.count("notifications", "SELECT count(*)::int FROM received")
            #expect(pushed, "received: \(received)")
            try await Task.sleep(for: .seconds(1))  // anything doubled would arrive by now
            #expect(try await cluster.count("scheduler", "SELECT count(DISTINCT alarm_id)::int FROM fires WHERE kind = 'fire'") == n)
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM outbox WHERE type = 'scheduler.alarm-fired'") == n)
            #expect(try await cluster.count("notifications", "SELECT count(*)::int FROM received") == n)
            #expect(try await cluster.count("notifications", "SELECT count(DISTINCT alarm_id)::int FROM received") == n)
            #expect(try await cluster.count("scheduler", "SELECT count(DISTINCT instance)::int FROM fires") >= 2)
        }
    }

    @Test("a replica paused past its lease and then continued cannot record a fire")
    func pausedReplicaIsFenced() async throws {
        // Fires at their instant (no lead): the pauses below are timed around it.
        try await withCluster("sched-stop", replicas: 2, environment: ["CHRONIR_LEASE_DURATION": "6s", "CHRONIR_FIRE_LEAD": "0s"]) { cluster in
            let a = try cluster.startReplica(0)
            #expect(await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                (try? await cluster.owners())?["replica-0"] == 256
            }, "\(cluster.logs)")
            // A loads 300 fires due in 22 s into its wheel.
            let n = 300
            let due = Date().addingTimeInterval(22)
            try await cluster.publish((0..<n).map { alarmState("stop-\($0)", at: due.addingTimeInterval(Double($0) * 0.001)) })
            #expect(await eventually(timeout: .seconds(15), every: .milliseconds(100)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM timers WHERE kind = 'fire'")) == n
            })
            try await Task.sleep(for: .seconds(1))  // A's loader polls every 100 ms

            // A stops; B takes every partition once A's leases expire (new epochs).
            a.signal(SIGSTOP)
            let b = try cluster.startReplica(1)
            #expect(await eventually(timeout: .seconds(15), every: .milliseconds(200)) {
                (try? await cluster.owners())?["replica-1"] == 256
            }, "\(cluster.logs)")
            // The epochs B fences A out with.
            _ = try await cluster.count("scheduler", "CREATE TABLE test_b_epochs AS SELECT partition, epoch FROM leases WHERE owner = 'replica-1'")
            try #require(try await cluster.count("scheduler", "SELECT count(*)::int FROM test_b_epochs") == 256)
            // B pauses just before the fires are due (its leases stay valid for 6 s); A continues
            // just after they are due, with the fires in its wheel and its old epochs.
            try await Task.sleep(until: .now + .seconds(due.addingTimeInterval(-1.5).timeIntervalSinceNow), clock: .continuous)
            b.signal(SIGSTOP)
            try await Task.sleep(until: .now + .seconds(due.addingTimeInterval(0.5).timeIntervalSinceNow), clock: .continuous)
            a.signal(SIGCONT)
            try await Task.sleep(for: .seconds(1))
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires") == 0, "A recorded fires while fenced")
            b.signal(SIGCONT)

            #expect(await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE kind = 'fire'")) == n
            }, "\(cluster.logs)")
            try await Task.sleep(for: .seconds(1))
            // No fire under an epoch older than B's: A's own epochs are dead. (A may still record
            // some under newer ones, if a lease of B's ran out before B, resumed on a busy
            // machine, renewed it: that is a takeover, not a fenced replica writing.)
            #expect(try await cluster.count("scheduler", """
                SELECT count(*)::int FROM fires f JOIN test_b_epochs b USING (partition) WHERE f.epoch < b.epoch
                """) == 0)
            #expect(try await cluster.count("scheduler", """
                SELECT count(*)::int FROM fires f JOIN test_b_epochs b USING (partition)
                WHERE f.instance = 'replica-0' AND f.epoch <= b.epoch
                """) == 0)
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires") == n)
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM outbox WHERE type = 'scheduler.alarm-fired'") == n)
        }
    }
}

extension FailoverTests {
    @Test("a pending timer the loader never saw (committed behind its position) is swept and fired")
    func sweepFindsMissedTimers() async throws {
        try await withCluster("sched-sweep", replicas: 1) { cluster in
            try cluster.startReplica(0)
            #expect(await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                (try? await cluster.owners())?["replica-0"] == 256
            })
            try await cluster.publish([alarmState("sweep-a", at: Date().addingTimeInterval(2))])
            #expect(await eventually(timeout: .seconds(15), every: .milliseconds(100)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires")) == 1
            })
            // A timer with an id below everything the loader has seen, already due.
            try await withDatabase(url: cluster.url, schema: "scheduler") { db in
                try await db.query("""
                    INSERT INTO alarms (alarm_id, partition, version, owner_id, title, timezone, time_of_day, next_fire_date, active,
                        offsets, members, alert_members)
                    SELECT 'sweep-b', partition, 1, 'u1', 'Swept', 'UTC', '09:00', now(), true, '{}', '{u1}', '{u1}'
                    FROM alarms WHERE alarm_id = 'sweep-a'
                    """)
                try await db.query("""
                    INSERT INTO timers (id, partition, alarm_id, kind, occurrence_at, due_at)
                    SELECT 0, partition, 'sweep-b', 'fire', now(), now() FROM alarms WHERE alarm_id = 'sweep-a'
                    """)
            }
            let swept = await eventually(timeout: .seconds(15), every: .milliseconds(200)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE alarm_id = 'sweep-b'")) == 1
            }
            #expect(swept, "\(cluster.logs)")
        }
    }
}
