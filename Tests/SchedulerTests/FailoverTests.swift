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
        // Fires at their instant (no lead), so the kill falls in the middle of the fires.
        try await withCluster("sched-kill", replicas: 3, environment: ["CHRONIR_FIRE_LEAD": "0s"]) { cluster in
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
            // The kill must leave fires of the victim's still to come, or it tests nothing.
            let pendingAtKill = try await cluster.pendingFires(ownedBy: "replica-1")
            cluster.replica(1).kill9()
            try #require(pendingAtKill > 0, "replica-1 had no pending fires when it was killed (a slow machine?)")
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
            #expect(await cluster.caughtUp(), "the notifications stand-in did not reach the scheduler's head")
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
            try #require(try await cluster.count("scheduler", "SELECT count(*)::int FROM timers WHERE kind = 'fire'") == n,
                         "the fires must still be pending when A continues")
            let fencedBefore = a.output.components(separatedBy: "fenced: some partitions").count
            a.signal(SIGCONT)
            // A tries to fire with its old epochs and is refused (it logs that), while B is paused.
            #expect(await eventually(timeout: .seconds(10), every: .milliseconds(50)) {
                a.output.components(separatedBy: "fenced: some partitions").count > fencedBefore
            }, "A never tried to fire after it continued: \(a.output.suffix(3000))")
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires") == 0, "A recorded fires while fenced")
            b.signal(SIGCONT)

            #expect(await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE kind = 'fire'")) == n
            }, "\(cluster.logs)")
            #expect(await cluster.caughtUp())
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
    @Test("a replica stopped inside its fire transaction, holding the lease rows: the idle timeout frees them, the other replica fires everything under new epochs, the paused one's transaction fails and it records nothing")
    func pausedInsideFireTransaction() async throws {
        // Lease 6 s: the paused transaction is ended by PostgreSQL after 3 s idle (half the
        // lease), before its leases expire, so the takeover can lock the lease rows.
        try await withCluster("sched-stop-tx", replicas: 2, environment: ["CHRONIR_LEASE_DURATION": "6s", "CHRONIR_FIRE_LEAD": "0s"]) { cluster in
            let a = try cluster.startReplica(0, environment: ["CHRONIR_FAILPOINT_STOP_IN_FIRE": "1"])
            #expect(await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                (try? await cluster.owners())?["replica-0"] == 256
            }, "\(cluster.logs)")
            let n = 300
            let due = Date().addingTimeInterval(6)
            try await cluster.publish((0..<n).map { alarmState("stoptx-\($0)", at: due.addingTimeInterval(Double($0) * 0.001)) })
            // A's first fire transaction passes its lease check, then A stops with the rows locked.
            #expect(await a.waitForOutput("failpoint: SIGSTOP after the lease check", timeout: .seconds(30)), "\(a.output.suffix(3000))")
            let pendingAtPause = try await cluster.count("scheduler", "SELECT count(*)::int FROM timers WHERE kind = 'fire'")
            try #require(pendingAtPause == n, "the fires must be pending while A is paused (\(pendingAtPause) of \(n))")
            let held = try await cluster.pairs("SELECT partition, epoch FROM leases WHERE owner = 'replica-0'")
            #expect(held.count == 256)

            // B starts and takes every partition: the locked ones only once PostgreSQL ended A's
            // idle transaction.
            let b = try cluster.startReplica(1)
            #expect(await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE kind = 'fire'")) == n
            }, "B did not fire everything while A was paused: \(cluster.logs)")
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE instance = 'replica-1'") == n)
            // Every fire carries B's epoch, newer than the one A held.
            #expect(try await cluster.count("scheduler", """
                SELECT count(*)::int FROM fires f JOIN leases l USING (partition)
                WHERE f.epoch <> l.epoch OR l.owner <> 'replica-1'
                """) == 0)
            let stale = Dictionary(uniqueKeysWithValues: held.map { ($0.0, $0.1) })
            let epochs = try await cluster.pairs("SELECT DISTINCT partition, epoch FROM fires")
            #expect(epochs.allSatisfy { $0.1 > (stale[$0.0] ?? .max) }, "a fire carries an epoch A held")

            // A continues: its transaction is gone (the batch fails, or Database.transaction runs
            // it again on another connection, since its own was lost before COMMIT); its retry
            // is fenced; it records nothing.
            a.signal(SIGCONT)
            #expect(await eventually(timeout: .seconds(20)) {
                a.output.contains("fire batch failed") || a.output.contains("its connection was lost before COMMIT")
            }, "\(a.output.suffix(3000))")
            #expect(await a.waitForOutput("fenced: some partitions", timeout: .seconds(20)), "\(a.output.suffix(3000))")
            #expect(await cluster.caughtUp())
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE instance = 'replica-0'") == 0)
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires") == n)
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM outbox WHERE type = 'scheduler.alarm-fired'") == n)
            #expect(try await cluster.count("notifications", "SELECT count(*)::int FROM received") == n)
            #expect(a.exitStatus == nil && b.exitStatus == nil)
        }
    }

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
