import ArgumentParser
import AsyncHTTPClient
import Contracts
import Foundation
import Messaging
import Synchronization

/// The phases of a load run: sign up, tiers, groups, live streams, alarms, fires, report.
final class LoadRunner: Sendable {
    struct User: Sendable {
        var uid: String
        var token: String
    }

    let options: LoadCommand
    let http: LoadHTTP
    let streams: HTTPClients
    let recorder: LoadRecorder
    let tracker: PushTracker
    let runId = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    /// The seed of the plan's draws (`--seed`, or drawn).
    let seed: UInt64
    private let failedCreations = Atomic<Int>(0)
    private let listeners = Mutex<[LiveListener]>([])
    private let completions = Mutex<[Task<Void, Never>]>([])

    init(options: LoadCommand, http: LoadHTTP, streams: HTTPClients, recorder: LoadRecorder, tracker: PushTracker) {
        self.options = options
        self.http = http
        self.streams = streams
        self.recorder = recorder
        self.tracker = tracker
        seed = options.seed ?? UInt64.random(in: 0...UInt64.max)
    }

    func run() async throws -> LoadReport {
        var phases: [String: Double] = [:]
        let started = ContinuousClock.now
        var mark = started
        func phase(_ name: String) {
            phases[name] = LoadHTTP.seconds(mark.duration(to: .now))
            mark = .now
        }
        var rng = SeededGenerator(seed: seed)
        progress("seed \(seed) (--seed \(seed) plans the same run)")
        let plan = LoadPlan(users: options.users, alarms: options.alarms, groupShare: options.groupShare, groupSize: options.groupSize,
                            minutes: options.window, spike: options.spike, spikeMinute: options.spikeMinute ?? options.window / 2,
                            using: &rng)
        progress("signing up \(options.users) users")
        let users = try await signUp()
        phase("1 signup")
        if options.tier != "keep" {
            progress("setting tier \(options.tier)")
            try await setTiers(users)
            phase("2 tiers")
        }
        progress("forming \(plan.groups.count) groups of \(options.groupSize)")
        let groupIds = try await formGroups(plan.groups, users)
        phase("3 groups")
        progress("opening \(users.count) live streams")
        try await listen(users)
        phase("4 streams")
        let windowStart = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + Double(options.lead)) / 60).rounded(.up) * 60)
        let spikeAt = windowStart.addingTimeInterval(Double(plan.spikeMinute) * 60)
        progress("creating \(plan.alarms.count) alarms due from \(ISOTime.format(windowStart)) (spike at \(ISOTime.format(spikeAt)))")
        try await createAlarms(plan, users, groupIds, windowStart: windowStart)
        phase("5 alarms")
        let lastDue = windowStart.addingTimeInterval(Double(options.window - 1) * 60)
        let firingFrom = ContinuousClock.now
        let requestsBefore = requestCount
        // The last fire's completion may come up to think + spread after it.
        try await awaitFires(until: lastDue.addingTimeInterval(Double(options.drain) + Double(options.think + options.thinkSpread) / 1000))
        phase("6 fires")
        for t in completions.withLock({ $0 }) { await t.value }
        let firingSeconds = LoadHTTP.seconds(firingFrom.duration(to: .now))
        let firingRequests = requestCount - requestsBefore
        // The last completions' pushes, then what the suite holds against what each client received.
        try await Task.sleep(for: .seconds(min(5, options.drain)))
        progress("auditing: every user's alarms and inbox against what its stream received")
        let groupMembers = Dictionary(zip(groupIds, plan.groups.map { Set($0.map { users[$0].uid }) }), uniquingKeysWith: { a, _ in a })
        let audit = try await audit(users, windowStart: windowStart, groupMembers: groupMembers)
        phase("7 audit")
        var out = report(plan: plan, phases: phases, windowStart: windowStart, firingSeconds: firingSeconds, firingRequests: firingRequests)
        out.apply(audit)
        return out
    }

    func stopListeners() async {
        for l in listeners.withLock({ $0 }) { await l.stop() }
    }

    // MARK: Phases

    func signUp() async throws -> [User] {
        let results = await concurrently(options.users) { [http, runId] i -> Result<User, LoadFailure> in
            let email = "load-\(runId)-\(i)@example.com", password = "load-password-\(runId)"
            var r = await http.send("POST /v1/auth/signup", .POST, "/v1/auth/signup", json: [
                "email": email, "password": password, "displayName": "Load \(i)", "timezone": "UTC"], retryRefused: true)
            if r.status == 409 {
                // An attempt refused in time (504) went through after all: the address is ours.
                r = await http.send("POST /v1/auth/login", .POST, "/v1/auth/login", json: ["email": email, "password": password],
                                    retryRefused: true)
                if r.status == 200 { r.status = 201 }
            }
            guard r.status == 201, let j = r.json, let token = j["accessToken"] as? String,
                  let uid = (j["user"] as? [String: Any])?["uid"] as? String else {
                return .failure(LoadFailure("\(r.status.map(String.init) ?? "no answer"): \(String(decoding: r.body.prefix(200), as: UTF8.self))"))
            }
            return .success(User(uid: uid, token: token))
        }
        let users = results.compactMap { try? $0.get() }
        guard users.count == options.users else {
            let first = results.lazy.compactMap { r -> String? in if case .failure(let e) = r { return e.description } else { return nil } }.first
            throw LoadSetupFailure("\(options.users - users.count) of \(options.users) signups failed (\(first ?? "")); is the suite at \(options.url)?")
        }
        return users
    }

    func setTiers(_ users: [User]) async throws {
        guard let level = Tier(rawValue: options.tier) else { return }
        let failed = Mutex<(count: Int, first: String?)>((0, nil))
        try await ServiceCall.with(.accounts) { accounts in
            try await ServiceCall.with(.alarms) { alarms in
                _ = await concurrently(users.count) { i -> Bool in
                    // Setting a tier is idempotent: a call that timed out (a service briefly
                    // unable to reach its database, as while containers come and go) is retried.
                    var attempt = 0
                    while true {
                        do {
                            _ = try await accounts.call(AccountsMethods.SetTier.self, .init(userId: users[i].uid, tier: level))
                            _ = try await alarms.call(AlarmsMethods.SetTier.self, .init(userId: users[i].uid, tier: level.rawValue))
                            return true
                        } catch {
                            attempt += 1
                            guard attempt < 4 else {
                                failed.withLock { $0.count += 1; $0.first = $0.first ?? "\(error)" }
                                return false
                            }
                            try? await Task.sleep(for: .seconds(attempt))
                        }
                    }
                }
            }
        }
        let (count, first) = failed.withLock { $0 }
        if count > 0 { throw LoadSetupFailure("setting the tier failed for \(count) users (\(first ?? "")); are CHRONIR_ACCOUNTS_RPC and CHRONIR_ALARMS_RPC right?") }
    }

    func formGroups(_ groups: [[Int]], _ users: [User]) async throws -> [String] {
        let results = await concurrently(groups.count) { [http] g -> String? in
            let members = groups[g]
            let owner = users[members[0]]
            let r = await http.send("POST /v1/groups", .POST, "/v1/groups", token: owner.token, json: ["name": "Load group \(g)"],
                                    retryRefused: true)
            guard r.status == 201, let id = r.json?["id"] as? String else { return nil }
            for m in members.dropFirst() {
                let inv = await http.send("POST /v1/invitations", .POST, "/v1/invitations", token: owner.token,
                                          json: ["type": "group", "referenceId": id], retryRefused: true)
                guard let code = inv.json?["id"] as? String else { return nil }
                let ok = await http.send("POST /v1/invitations/{code}/accept", .POST, "/v1/invitations/\(code)/accept",
                                         token: users[m].token, retryRefused: true)
                // 409 after a refused attempt: that attempt was applied (the audit reads the members the suite holds).
                guard ok.ok || (ok.status == 409 && http.recorder.refusedCount("POST /v1/invitations/{code}/accept") > 0) else { return nil }
            }
            return id
        }
        let ids = results.compactMap { $0 }
        guard ids.count == groups.count else { throw LoadSetupFailure("\(groups.count - ids.count) of \(groups.count) groups could not be formed") }
        return ids
    }

    func listen(_ users: [User]) async throws {
        let all = users.enumerated().map { i, u -> LiveListener in
            var draws = SeededGenerator(seed: seed, item: i, stream: 2)
            let l = LiveListener(user: u.uid, reconnectEvery: options.reconnectEvery, seed: draws.next())
            l.start(client: streams.client(at: i), gateways: http.gateways, token: { u.token }) { [weak self] n, at in
                self?.notified(n, user: u, at: at)
            }
            return l
        }
        listeners.withLock { $0 = all }
        let deadline = ContinuousClock.now + .seconds(120)
        while all.contains(where: { !$0.isConnected }) {
            guard ContinuousClock.now < deadline else {
                throw LoadSetupFailure("\(all.filter { !$0.isConnected }.count) live streams did not connect in 120 s")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    func createAlarms(_ plan: LoadPlan, _ users: [User], _ groupIds: [String], windowStart: Date) async throws {
        let startDate = ISOTime.format(Calendar.utc.startOfDay(for: Date()))
        let created = Atomic<Int>(0)
        let lateCreated = Atomic<Int>(0)
        let results = await concurrently(plan.alarms.count) { [http, tracker, seed, share = options.completeShare] k -> Bool in
            let spec = plan.alarms[k]
            let due = windowStart.addingTimeInterval(Double(spec.minute) * 60)
            let hm = String(ISOTime.format(due).dropFirst(11).prefix(5))
            var body: [String: Any] = [
                "title": "Load \(k)", "preAlarmWarningEnabled": false,
                "schedule": ["type": "custom", "intervalDays": 1, "timeOfDay": hm, "timezone": "UTC", "startDate": startDate],
            ]
            if let g = spec.group { body["groupId"] = groupIds[g] }
            // A refused creation is sent again: a second alarm it may make is in the suite's
            // record, which the audit judges by.
            let r = await http.send("POST /v1/alarms", .POST, "/v1/alarms", token: users[spec.owner].token, json: body, retryRefused: true)
            guard r.status == 201, let j = r.json, let id = j["id"] as? String else { return false }
            created.add(1, ordering: .relaxed)
            guard (j["nextFireDate"] as? String).flatMap(ISOTime.parse) == due else {
                lateCreated.add(1, ordering: .relaxed)
                return true
            }
            let members = [users[spec.owner].uid] + ((j["sharedWith"] as? [String]) ?? [])
            var draw = SeededGenerator(seed: seed, item: k, stream: 1)
            let completes = share >= 1 || Double.random(in: 0..<1, using: &draw) < share
            // By position among the members (their ids differ from run to run).
            let completer = !completes ? nil : spec.group == nil ? members[0] : members[Int.random(in: 0..<members.count, using: &draw)]
            tracker.plan(.init(id: id, due: due, members: members, completer: completer))
            return true
        }
        let failed = results.filter { !$0 }.count
        failedCreations.store(failed, ordering: .relaxed)
        if failed > 0 { progress("\(failed) alarm creations failed (see the report's statuses)") }
        if lateCreated.load(ordering: .relaxed) > 0 {
            progress("\(lateCreated.load(ordering: .relaxed)) alarms were created after their minute began; not counted (raise --lead)")
        }
        guard created.load(ordering: .relaxed) > 0 else { throw LoadSetupFailure("no alarm could be created") }
    }

    func awaitFires(until deadline: Date) async throws {
        var lastProgress = Date.distantPast
        var completeSince: Date?
        while Date() < deadline {
            let t = tracker.tally
            // Everything arrived: listen a few seconds more, so a late duplicate is counted.
            if Date() > deadline.addingTimeInterval(-Double(options.drain)), t.complete {
                if let since = completeSince {
                    if Date().timeIntervalSince(since) >= min(5, Double(options.drain)) { break }
                } else {
                    completeSince = Date()
                }
            } else {
                completeSince = nil
            }
            if Date().timeIntervalSince(lastProgress) >= 5 {
                lastProgress = Date()
                let f = recorder.failures
                let late = recorder.state.withLock { $0.fireLateness }
                progress(String(format: "fire pushes %d/%d, completions %d (+%d failed), completion pushes %d/%d, 5xx %d, p99 lateness %.0f ms",
                                t.receivedFires, t.expectedFires, t.completions, t.completionsFailed,
                                t.receivedCompletionPushes, t.expectedCompletionPushes, f.serverErrors, late.ms(99)))
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    // MARK: Devices

    /// A notification reached `user`'s stream: the completer marks the fire done after a pause.
    func notified(_ n: LiveNotification, user: User, at: Date) {
        guard let (alarm, occurrence) = tracker.received(n, by: user.uid, at: at) else { return }
        let pause = options.think + (options.thinkSpread > 0 ? Int.random(in: 0...options.thinkSpread) : 0)
        let task = Task { [http, tracker] in
            try? await Task.sleep(for: .milliseconds(pause))
            tracker.completionStarting(alarm: alarm, occurrence: occurrence, at: Date())
            let r = await http.send("POST /v1/alarms/{id}/completions", .POST, "/v1/alarms/\(alarm)/completions", token: user.token,
                                    json: ["status": "completed", "scheduledDate": ISOTime.format(occurrence)], retryTransport: true)
            // A completion names its occurrence, so a repeat after a transport error is applied
            // once: 200 with the log the first attempt made. A 200 with another log (the
            // occurrence was already missed, or someone else completed it) is not this completion.
            // Only a 200 needs its body read (a 201 is this completion).
            let log = r.status == 200 ? r.json?["completion"] as? [String: Any] : nil
            let repeated = log?["status"] as? String == "completed" && log?["userId"] as? String == user.uid
            tracker.completionFinished(alarm: alarm, ok: r.status == 201 || repeated)
        }
        completions.withLock { $0.append(task) }
    }

    // MARK: Report

    var requestCount: Int {
        recorder.state.withLock { s in s.http.values.reduce(0) { $0 + $1.statuses.values.reduce(0, +) + $1.transportErrors } }
    }

    func report(plan: LoadPlan, phases: [String: Double], windowStart: Date, firingSeconds: Double, firingRequests: Int) -> LoadReport {
        let t = tracker.tally
        let s = recorder.state.withLock { $0 }
        let failures = recorder.failures
        let reconnects = listeners.withLock { $0.reduce(0) { $0 + $1.reconnectCount } }
        let pushSpan = max(0.001, (t.lastPushAt ?? windowStart).timeIntervalSince(windowStart) + 1)
        return LoadReport(
            url: options.url, users: options.users, groups: plan.groups.count, groupSize: options.groupSize, alarms: options.alarms,
            spike: min(options.spike, options.alarms), spikeAt: ISOTime.format(windowStart.addingTimeInterval(Double(plan.spikeMinute) * 60)),
            thinkMs: options.think, thinkSpreadMs: options.thinkSpread,
            windowStart: ISOTime.format(windowStart), phasesSeconds: phases,
            fireLatenessMs: s.fireLateness.summary, completionFanOutMs: s.fanOut.summary,
            pushes: .init(plannedAlarms: t.plannedAlarms, expectedFirePushes: t.expectedFires, receivedFirePushes: t.receivedFires,
                          lostFirePushes: t.expectedFires - t.receivedFires, duplicateFirePushes: t.duplicateFires,
                          earlyFirePushes: t.earlyFires,
                          completions: t.completions, failedCompletions: t.completionsFailed,
                          expectedCompletionPushes: t.expectedCompletionPushes, receivedCompletionPushes: t.receivedCompletionPushes,
                          lostCompletionPushes: t.expectedCompletionPushes - t.receivedCompletionPushes,
                          duplicateCompletionPushes: t.duplicateCompletionPushes, repeatedByTransport: t.transportRepeats,
                          missedPushes: t.missedPushes, otherPushes: t.otherPushes, streamReconnects: reconnects,
                          clientDrops: listeners.withLock { $0.reduce(0) { $0 + $1.droppedCount } }),
            http: s.http.sorted { $0.key < $1.key }.map { op, c in
                .init(operation: op, latencyMs: c.latency.summary,
                      statuses: Dictionary(uniqueKeysWithValues: c.statuses.map { (String($0.key), $0.value) }),
                      rateLimitedRetries: c.rateLimited, refusedRetries: c.refused, transportErrors: c.transportErrors,
                      transportRetries: c.transportRetries)
            },
            requests: requestCount, serverErrors: failures.serverErrors, transportErrors: failures.transport,
            transportRetries: s.http.values.reduce(0) { $0 + $1.transportRetries },
            transportErrorKinds: s.transportErrorKinds.sorted(),
            requestsPerSecond: Double(firingRequests) / max(0.001, firingSeconds),
            pushesPerSecond: Double(t.receivedFires + t.receivedCompletionPushes) / pushSpan,
            byMinute: s.lateByMinute.sorted { $0.key < $1.key }.map { due, l in
                .init(due: ISOTime.format(due), pushes: l.count, p50: l.ms(50), p99: l.ms(99), max: l.maxMs)
            },
            sampledTraces: s.sampledTraces, seed: seed, failedAlarmCreations: failedCreations.load(ordering: .relaxed))
    }

    // MARK: Helpers

    func progress(_ line: String) {
        let stamp = ISOTime.format(Date()).dropFirst(11).prefix(8)
        FileHandle.standardError.write(Data("[\(stamp)] \(line)\n".utf8))
    }

    /// Runs `body(0..<count)` with at most `--concurrency` in flight; results in index order.
    func concurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) async -> T) async -> [T] {
        let limit = max(1, options.concurrency)
        return await withTaskGroup(of: (Int, T).self) { group in
            var out = [T?](repeating: nil, count: count)
            var next = 0
            while next < min(limit, count) {
                let i = next
                group.addTask { (i, await body(i)) }
                next += 1
            }
            while let (i, value) = await group.next() {
                out[i] = value
                if next < count {
                    let j = next
                    group.addTask { (j, await body(j)) }
                    next += 1
                }
            }
            return out.map { $0! }
        }
    }
}

extension Calendar {
    /// The Gregorian calendar in UTC.
    static var utc: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }
}
