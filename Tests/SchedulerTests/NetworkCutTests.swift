import Foundation
import Support
import Testing

extension FailoverTests {
    @Test("a replica cut off from PostgreSQL, its process running, loses its partitions within the lease, records nothing, and rejoins without a duplicate")
    func networkCutReplica() async throws {
        try await withCluster("sched-cut", replicas: 2, environment: ["CHRONIR_LEASE_DURATION": "6s", "CHRONIR_FIRE_LEAD": "0s"]) { cluster in
            // Replica 0 reaches PostgreSQL only through a proxy the test cuts: a partition.
            var direct = try #require(URLComponents(string: cluster.url))
            let proxy = try TCPProxy(upstreamPort: try #require(direct.port))
            defer { proxy.close() }
            direct.port = proxy.port
            let a = try cluster.startReplica(0, environment: ["DATABASE_URL": try #require(direct.string)])
            try cluster.startReplica(1)
            let shared = await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                let o = (try? await cluster.owners()) ?? [:]
                return o.count == 2 && o.values.reduce(0, +) == 256
            }
            let sharedOwners = (try? await cluster.owners()) ?? [:]
            #expect(shared, "partitions: \(sharedOwners)\n\(cluster.logs)")

            // 400 fires due 12–16 s from now, loaded into both wheels.
            let n = 400
            let due = Date().addingTimeInterval(12)
            try await cluster.publish((0..<n).map { alarmState("cut-a-\($0)", at: due.addingTimeInterval(Double($0) * 0.01)) })
            #expect(await eventually(timeout: .seconds(10), every: .milliseconds(100)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM timers WHERE kind = 'fire'")) == n
            })
            try await Task.sleep(for: .seconds(1))  // both loaders poll every 100 ms
            #expect(((try await cluster.owners())["replica-0"] ?? 0) > 0)

            // The network between replica 0 and PostgreSQL goes; the process keeps running.
            // Fires of replica 0's must still be ahead, or the cut tests nothing.
            let pendingAtCut = try await cluster.pendingFires(ownedBy: "replica-0")
            let cutWall = Date()
            proxy.cut()
            try #require(pendingAtCut > 0, "replica 0 had no pending fires at the cut (a slow machine?)")
            let cutAt = ContinuousClock.now
            let moved = await eventually(timeout: .seconds(20), every: .milliseconds(100)) {
                (try? await cluster.owners()) == ["replica-1": 256]
            }
            let moveTime = cutAt.duration(to: .now)
            let cutOwners = (try? await cluster.owners()) ?? [:]
            #expect(moved, "partitions after the cut: \(cutOwners)\n\(cluster.logs)")
            // The lease (6 s) after the last renewal (at most a heartbeat, 1 s, before the cut),
            // then the survivor's next heartbeat.
            #expect(moveTime <= .seconds(8.5), "partitions moved \(moveTime) after the cut")
            #expect(a.exitStatus == nil, "the cut replica exited: \(a.output.suffix(2000))")

            let recorded = await eventually(timeout: .seconds(40), every: .milliseconds(200)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE kind = 'fire'")) == n
            }
            #expect(recorded, "\(cluster.logs)")
            // Nothing recorded by the cut replica after the cut. (On a busy machine the fires can
            // come due before the cut, and replica 0 then rightly records its share first: its
            // fire times are taken before the statement is sent, so anything sent before the cut
            // is stamped before it.)
            let stamp = ISO8601DateFormatter()
            stamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let before = try await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE instance = 'replica-0' AND fired_at < '\(stamp.string(from: cutWall))'")
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE instance = 'replica-0' AND fired_at >= '\(stamp.string(from: cutWall))'") == 0,
                    "the cut replica recorded fires after the cut (\(before) before it)")

            // The network returns: replica 0 reconnects by itself and takes a share again.
            proxy.restore()
            let rejoined = await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                let o = (try? await cluster.owners()) ?? [:]
                return (o["replica-0"] ?? 0) > 0 && o.values.reduce(0, +) == 256
            }
            let returnOwners = (try? await cluster.owners()) ?? [:]
            #expect(rejoined, "partitions after the return: \(returnOwners)\n\(cluster.logs)")
            let m = 400
            let due2 = Date().addingTimeInterval(6)
            try await cluster.publish((0..<m).map { alarmState("cut-b-\($0)", at: due2.addingTimeInterval(Double($0) * 0.01)) })
            let all = await eventually(timeout: .seconds(40), every: .milliseconds(200)) {
                (try? await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE kind = 'fire'")) == n + m
            }
            let activity = try await withDatabase(url: cluster.url, schema: "scheduler") { db in
                try await db.query("SELECT coalesce(application_name,'') || ' ' || coalesce(state,'') || ' ' || coalesce(wait_event_type,'') || ':' || coalesce(wait_event,'') || ' ' || coalesce(left(query, 120),'') || ' age=' || coalesce((now() - query_start)::text,'') FROM pg_stat_activity WHERE datname = current_database()").all(String.self)
            }
            #expect(all, "\(activity.joined(separator: "\n"))")
            let pushed = await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
                (try? await cluster.count("notifications", "SELECT count(*)::int FROM received")) == n + m
            }
            let received = (try? await cluster.count("notifications", "SELECT count(*)::int FROM received")) ?? -1
            #expect(pushed, "received: \(received)")
            #expect(await cluster.caughtUp())
            #expect(try await cluster.count("scheduler", "SELECT count(DISTINCT alarm_id)::int FROM fires WHERE kind = 'fire'") == n + m)
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM outbox WHERE type = 'scheduler.alarm-fired'") == n + m)
            #expect(try await cluster.count("notifications", "SELECT count(*)::int FROM received") == n + m)
            #expect(try await cluster.count("notifications", "SELECT count(DISTINCT alarm_id)::int FROM received") == n + m)
            #expect(try await cluster.count("scheduler", "SELECT count(*)::int FROM fires WHERE instance = 'replica-0' AND alarm_id LIKE 'cut-b-%'") > 0,
                    "the rejoined replica fired nothing")
            #expect(a.exitStatus == nil)
        }
    }
}
