import Foundation

/// The results of a load run, printed as a table or (`--json`) as JSON.
struct LoadReport: Codable, Sendable {
    struct Distribution: Codable, Sendable {
        var count: Int
        var p50: Double
        var p90: Double
        var p99: Double
        var p999: Double
        var max: Double
    }

    struct HTTPOperation: Codable, Sendable {
        var operation: String
        var latencyMs: Distribution
        var statuses: [String: Int]
        var rateLimitedRetries: Int
        /// Set-up requests refused (503, 504, no answer) and sent again after a backoff.
        var refusedRetries: Int = 0
        var transportErrors: Int
        /// Transport errors after which the request was sent again (safe to repeat).
        var transportRetries: Int
    }

    struct Minute: Codable, Sendable {
        var due: String
        var pushes: Int
        var p50: Double
        var p99: Double
        var max: Double
    }

    struct SampledTrace: Codable, Sendable {
        var operation: String
        var traceId: String
        var status: Int
        /// When this client began sending the request (compare with the trace's first span to
        /// see the time spent before the gateway saw it).
        var sentAtUnixMs: Double
        /// Request to response as this client measured it.
        var seconds: Double
    }

    struct Pushes: Codable, Sendable {
        var plannedAlarms: Int
        var expectedFirePushes: Int
        var receivedFirePushes: Int
        var lostFirePushes: Int
        var duplicateFirePushes: Int
        /// Fire pushes that arrived before their instant (more than 50 ms).
        var earlyFirePushes: Int = 0
        var completions: Int
        var failedCompletions: Int
        var expectedCompletionPushes: Int
        var receivedCompletionPushes: Int
        var lostCompletionPushes: Int
        var duplicateCompletionPushes: Int
        var repeatedByTransport: Int
        var missedPushes: Int
        var otherPushes: Int
        var streamReconnects: Int
        /// Connections the clients dropped themselves (`--reconnect-every`), included in `streamReconnects`.
        var clientDrops: Int = 0
    }

    var url: String
    var users: Int
    var groups: Int
    var groupSize: Int
    var alarms: Int
    var spike: Int
    var spikeAt: String
    /// A completion is sent `thinkMs` plus up to `thinkSpreadMs` (uniform) after its fire arrives.
    var thinkMs: Int
    var thinkSpreadMs: Int
    var windowStart: String
    var phasesSeconds: [String: Double]
    var fireLatenessMs: Distribution
    var completionFanOutMs: Distribution
    var pushes: Pushes
    var http: [HTTPOperation]
    var requests: Int
    var serverErrors: Int
    var transportErrors: Int
    /// Transport errors after which the request was sent again (completions: applied once).
    var transportRetries: Int
    var transportErrorKinds: [String]
    var requestsPerSecond: Double
    var pushesPerSecond: Double
    var byMinute: [Minute]
    var sampledTraces: [SampledTrace]
    /// The seed of the plan's draws (`--seed`).
    var seed: UInt64 = 0
    /// Alarm creations that failed (after the set-up retries): planned work that did not happen.
    var failedAlarmCreations = 0
    /// The end-of-run audit against the suite's record (``LoadAudit``); when present, `pushes`'
    /// expected, received, lost and duplicated counts are its own.
    var audit: LoadAudit.Result?
    /// The pushes as the generator tallied them while running (from its own answers; kept to compare).
    var generatorPushes: Pushes?

    /// Takes the audit's counts as the run's.
    mutating func apply(_ a: LoadAudit.Result) {
        generatorPushes = pushes
        audit = a
        pushes.expectedFirePushes = a.fire.expected
        pushes.receivedFirePushes = a.fire.received
        pushes.lostFirePushes = a.fire.lost
        pushes.duplicateFirePushes = a.fire.duplicated
        pushes.expectedCompletionPushes = a.completion.expected
        pushes.receivedCompletionPushes = a.completion.received
        pushes.lostCompletionPushes = a.completion.lost
        pushes.duplicateCompletionPushes = a.completion.duplicated
    }

    /// What breaks the guarantees: lost or duplicated pushes, failed completions, 5xx and
    /// transport errors of requests that were not sent again (a completion that met a killed
    /// gateway and was sent again to another is not one: the generator retried it, as a device
    /// would, and `failedCompletions` counts it if the repeat failed too). Empty for a clean run
    /// (`chronirctl load --check` fails otherwise).
    var problems: [String] {
        let p = pushes
        var out: [String] = []
        if p.plannedAlarms == 0 { out.append("no alarm was planned inside the window") }
        if let audit {
            if audit.acceptedAlarms == 0 { out.append("the suite holds no alarm due inside the window") }
            out += audit.problems
        } else {
            if p.lostFirePushes != 0 { out.append("\(p.lostFirePushes) fire pushes lost") }
            if p.duplicateFirePushes > 0 { out.append("\(p.duplicateFirePushes) fire pushes duplicated") }
            if p.lostCompletionPushes != 0 { out.append("\(p.lostCompletionPushes) completion pushes lost") }
            if p.duplicateCompletionPushes > 0 { out.append("\(p.duplicateCompletionPushes) completion pushes duplicated") }
        }
        if p.earlyFirePushes > 0 { out.append("\(p.earlyFirePushes) fire pushes arrived before their instant") }
        if p.failedCompletions > 0 { out.append("\(p.failedCompletions) completions failed") }
        if failedAlarmCreations > 0 { out.append("\(failedAlarmCreations) alarm creations failed") }
        if serverErrors > 0 { out.append("\(serverErrors) responses were 5xx") }
        let unrecovered = transportErrors - transportRetries
        if unrecovered > 0 { out.append("\(unrecovered) requests failed in transport and were not sent again") }
        return out
    }

    /// The report as text tables.
    var text: String {
        func row(_ name: String, _ d: Distribution) -> [String] {
            [name, String(d.count)] + [d.p50, d.p90, d.p99, d.p999, d.max].map { String(format: "%.1f", $0) }
        }
        var out = "chronirctl load → \(url): \(users) users, \(groups) groups of \(groupSize), \(alarms) alarms, "
        out += "window from \(windowStart), spike of \(spike) at \(spikeAt), completions \(thinkMs)–\(thinkMs + thinkSpreadMs) ms after their fire\n"
        out += "seed \(seed); alarm creations failed \(failedAlarmCreations); set-up requests sent again after a refusal (503, 504, no answer) "
        out += "\(http.reduce(0) { $0 + $1.refusedRetries }); live streams dropped by the client \(pushes.clientDrops)\n"
        out += "phases: " + phasesSeconds.sorted { $0.key < $1.key }.map { String(format: "%@ %.1f s", $0.key, $0.value) }.joined(separator: ", ") + "\n\n"
        var rows = [row("fire lateness (due → push)", fireLatenessMs), row("completion fan-out", completionFanOutMs)]
        rows += http.map { row($0.operation, $0.latencyMs) }
        out += Table.render(header: ["latency (ms)", "count", "p50", "p90", "p99", "p99.9", "max"], rows: rows) + "\n\n"
        let p = pushes
        if let a = audit {
            // Expected from the alarms the suite holds (members as they fired); received and lost
            // per client against its own inbox.
            func kind(_ name: String, _ k: LoadAudit.Kind) -> [String] {
                let counts: [Int] = [k.expected, k.received, k.lost, k.duplicated, k.inInbox, k.lostOnStream, k.notInInbox, k.unexpected]
                return [name] + counts.map { String($0) }
            }
            out += Table.render(header: ["pushes", "expected", "received", "lost", "duplicated", "in inbox", "lost on stream", "not in inbox",
                                         "unexpected"],
                                rows: [kind("fire", a.fire), kind("completion", a.completion)]) + "\n"
            out += "audit: \(a.acceptedAlarms) alarms accepted for the window (planned but not accepted \(a.plannedNotAccepted), "
            out += "accepted but not heard \(a.acceptedNotPlanned)); misrouted frames \(a.misrouted), out of order \(a.outOfOrderFrames), "
            out += "other inbox rows not on the stream \(a.otherRowsNotOnStream)\n"
            for e in a.examples { out += "  \(e)\n" }
            if let g = generatorPushes {
                out += "as the generator tallied while running: fire \(g.expectedFirePushes) expected, \(g.receivedFirePushes) received; "
                out += "completion \(g.expectedCompletionPushes) expected, \(g.receivedCompletionPushes) received\n"
            }
        } else {
            out += Table.render(header: ["pushes", "expected", "received", "lost", "duplicated"], rows: [
                ["fire", String(p.expectedFirePushes), String(p.receivedFirePushes), String(p.lostFirePushes), String(p.duplicateFirePushes)],
                ["completion", String(p.expectedCompletionPushes), String(p.receivedCompletionPushes), String(p.lostCompletionPushes),
                 String(p.duplicateCompletionPushes)],
            ]) + "\n"
        }
        out += "alarms planned \(p.plannedAlarms); completions \(p.completions) (\(p.failedCompletions) failed); "
        out += "missed pushes \(p.missedPushes); other \(p.otherPushes); repeated by transport \(p.repeatedByTransport); "
        out += "stream reconnects \(p.streamReconnects)\n"
        out += String(format: "requests %d (%.1f/s), 5xx %d, transport errors %d (%d of them sent again); pushes %.1f/s while firing\n\n",
                      requests, requestsPerSecond, serverErrors, transportErrors, transportRetries, pushesPerSecond)
        for kind in transportErrorKinds { out += "  transport error: \(kind)\n" }
        if let a = audit {
            let audited: [String: LoadAudit.Minute] = Dictionary(a.byMinute.map { ($0.due, $0) }, uniquingKeysWith: { x, _ in x })
            let late: [String: Minute] = Dictionary(byMinute.map { ($0.due, $0) }, uniquingKeysWith: { x, _ in x })
            let dues = Set(audited.keys).union(late.keys).sorted()
            out += Table.render(header: ["due minute", "fires expected", "in inbox", "received", "lost", "duplicated", "p50 ms", "p99 ms", "max ms"],
                                rows: dues.map { due in
                let m: LoadAudit.Minute = audited[due] ?? LoadAudit.Minute(due: due)
                let counts: [Int] = [m.expected, m.inInbox, m.received, m.lost, m.duplicated]
                var times: [String] = ["-", "-", "-"]
                if let l = late[due] { times = [l.p50, l.p99, l.max].map { String(format: "%.1f", $0) } }
                return [due] + counts.map { String($0) } + times
            }) + "\n"
        } else {
            out += Table.render(header: ["due minute", "fire pushes", "p50 ms", "p99 ms", "max ms"], rows: byMinute.map {
                [$0.due, String($0.pushes), String(format: "%.1f", $0.p50), String(format: "%.1f", $0.p99), String(format: "%.1f", $0.max)]
            }) + "\n"
        }
        if !sampledTraces.isEmpty {
            out += "\nsampled traces (chronirctl trace <id> --files …):\n"
            out += sampledTraces.prefix(20).map { "  \($0.traceId)  \($0.operation) → \($0.status)" }.joined(separator: "\n") + "\n"
            if sampledTraces.count > 20 { out += "  … and \(sampledTraces.count - 20) more (--json lists all)\n" }
        }
        return out
    }
}
