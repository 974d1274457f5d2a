import Foundation
import Messaging

/// The end of a load run, judged against the suite's own record rather than the generator's
/// timing: what the suite accepted (each alarm read back as its owner, with its members at fire
/// time), what each client's inbox holds, and what each client's live stream delivered. Pure:
/// ``compute(alarms:inbox:received:planned:)`` is given the facts and counts.
enum LoadAudit {
    /// An alarm the suite accepted, due inside the window.
    struct AlarmFacts: Sendable {
        var id: String
        /// The owner first, then the members it was shared with when it fired.
        var members: [String]
        var due: Date
        /// Whether the suite recorded a completion.
        var completed: Bool
        /// Who the generator meant to complete it (used when no inbox row names the completer).
        var completer: String? = nil
    }

    /// One row of a client's inbox (or one frame of its live stream), as far as the audit reads it.
    struct Row: Sendable {
        var id: Int64
        /// Whose notification the row or frame says it is.
        var user: String
        var type: String
        var alarm: String?
        var occurrence: Date?
        var completedBy: String?
    }

    /// Types the live stream carries that the public inbox does not list (sync signals).
    static let silentTypes: Set<String> = ["alarm_changed", "plan_changed"]

    /// Counts of one kind of push (fires, completions).
    struct Kind: Codable, Sendable, Equatable {
        /// Pushes the accepted alarms call for: a fire to every member, a completion to every
        /// member but the one who completed.
        var expected = 0
        /// Of those, how many have their row in the recipient's inbox.
        var inInbox = 0
        /// Of those, how many reached the recipient's live stream.
        var received = 0
        /// Expected, not received (= not in the inbox + lost on the stream, where both apply).
        var lost = 0
        /// Expected with no inbox row: lost before the inbox.
        var notInInbox = 0
        /// In the recipient's inbox, never on its live stream: lost between the inbox and the client.
        var lostOnStream = 0
        /// Frames received more than once (each repeat counts).
        var duplicated = 0
        /// Inbox rows of the run's alarms that nothing called for (a push to a non-member, a second fire).
        var unexpected = 0
    }

    /// One due minute.
    struct Minute: Codable, Sendable, Equatable {
        var due: String
        var expected = 0
        var inInbox = 0
        var received = 0
        var lost = 0
        var duplicated = 0
    }

    /// What the audit found.
    struct Result: Codable, Sendable, Equatable {
        var acceptedAlarms = 0
        /// Alarms the generator planned that the suite does not hold, and accepted alarms the
        /// generator never heard accepted (a creation answered with a transport error).
        var plannedNotAccepted = 0
        var acceptedNotPlanned = 0
        var fire = Kind()
        var completion = Kind()
        /// Frames a client received that were not its own: another user's, or an id at or below
        /// the last of its inbox as read that its inbox does not hold.
        var misrouted = 0
        /// Frames received more than once by a client, whatever their type (each repeat counts).
        var repeatedFrames = 0
        /// Frames that arrived after a larger id (a client's ids must strictly increase; repeats
        /// are counted apart).
        var outOfOrderFrames = 0
        /// Inbox rows of any other type (not the run's fires and completions) that never reached
        /// their client's stream: every row of an inbox must.
        var otherRowsNotOnStream = 0
        /// Users whose alarms or inbox could not be read back (the audit is incomplete).
        var unreadable = 0
        var byMinute: [Minute] = []
        /// The first few faults, for a person to follow up.
        var examples: [String] = []

        /// What breaks a guarantee.
        var problems: [String] {
            var out: [String] = []
            for (name, k) in [("fire", fire), ("completion", completion)] {
                if k.lost > 0 { out.append("\(k.lost) \(name) pushes lost (\(k.notInInbox) never in the inbox, \(k.lostOnStream) in the inbox but not on the stream)") }
                if k.duplicated > 0 { out.append("\(k.duplicated) \(name) pushes duplicated") }
                if k.unexpected > 0 { out.append("\(k.unexpected) \(name) inbox rows nothing called for") }
            }
            if misrouted > 0 { out.append("\(misrouted) frames reached a client they were not for") }
            if repeatedFrames > 0 { out.append("\(repeatedFrames) frames reached a client more than once") }
            if outOfOrderFrames > 0 { out.append("\(outOfOrderFrames) frames reached a client after a larger id") }
            if otherRowsNotOnStream > 0 { out.append("\(otherRowsNotOnStream) other inbox rows never reached their client's stream") }
            if plannedNotAccepted > 0 { out.append("\(plannedNotAccepted) alarms answered 201 that the suite does not hold") }
            if unreadable > 0 { out.append("\(unreadable) users' alarms or inbox could not be read back: the audit is incomplete") }
            return out
        }
    }

    /// Counts. `inbox` and `received` are by client (user id); `received` in arrival order,
    /// repeats included. `planned`: the alarm ids the generator heard accepted.
    static func compute(alarms: [AlarmFacts], inbox: [String: [Row]], received: [String: [Row]], planned: Set<String>) -> Result {
        var r = Result()
        r.acceptedAlarms = alarms.count
        let accepted = Dictionary(alarms.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        r.plannedNotAccepted = planned.subtracting(accepted.keys).count
        r.acceptedNotPlanned = Set(accepted.keys).subtracting(planned).count
        // Apart from `r`: `tally` below holds `r.fire` or `r.completion` inout while it notes.
        var examples: [String] = []
        func note(_ s: String) { if examples.count < 12 { examples.append(s) } }
        func key(_ user: String, _ alarm: String, _ due: Date) -> String { "\(user)|\(alarm)|\(Int64(due.timeIntervalSince1970 * 1000))" }
        func ofRun(_ row: Row, _ type: String) -> AlarmFacts? {
            guard row.type == type, let a = row.alarm.flatMap({ accepted[$0] }), row.occurrence == a.due else { return nil }
            return a
        }

        // Inbox rows by key, per kind; ids per client.
        var fireRows: [String: Int64] = [:]
        var completionRows: [String: Int64] = [:]
        var completer: [String: String] = [:]
        var inboxIds: [String: Set<Int64>] = [:]
        var lastRead: [String: Int64] = [:]
        for (user, rows) in inbox {
            for row in rows {
                inboxIds[user, default: []].insert(row.id)
                lastRead[user] = max(lastRead[user] ?? row.id, row.id)
                if let a = ofRun(row, "alarm_fired") {
                    let k = key(user, a.id, a.due)
                    if fireRows[k] != nil { r.fire.unexpected += 1; note("second fire row \(row.id) of \(a.id) for \(user)") }
                    fireRows[k] = row.id
                } else if let a = ofRun(row, "alarm_completed") {
                    let k = key(user, a.id, a.due)
                    if completionRows[k] != nil { r.completion.unexpected += 1; note("second completion row \(row.id) of \(a.id) for \(user)") }
                    completionRows[k] = row.id
                    if let by = row.completedBy { completer[a.id] = by }
                }
            }
        }

        // Frames per client: repeats, misroutes, what arrived.
        var receivedIds: [String: Set<Int64>] = [:]
        var repeats: [String: Int] = [:]   // by inbox key
        for (user, frames) in received {
            var seen: [Int64: Int] = [:]
            var firstOf: [Int64: Row] = [:]
            var highest: Int64 = .min
            for f in frames {
                seen[f.id, default: 0] += 1
                if seen[f.id] == 1, f.id < highest {
                    r.outOfOrderFrames += 1
                    note("frame \(f.id) (\(f.type)) reached \(user) after \(highest)")
                }
                highest = max(highest, f.id)
                if firstOf[f.id] == nil { firstOf[f.id] = f }
                // An id above the last the inbox read held may have been written after the read.
                let unknown = !silentTypes.contains(f.type) && f.id <= (lastRead[user] ?? -1) && inboxIds[user]?.contains(f.id) != true
                if f.user != user || unknown {
                    r.misrouted += 1
                    note("frame \(f.id) (\(f.type), for \(f.user)) reached \(user)")
                }
            }
            receivedIds[user] = Set(seen.keys)
            r.repeatedFrames += seen.values.reduce(0) { $0 + max(0, $1 - 1) }
            for (id, count) in seen where count > 1 {
                guard let f = firstOf[id], let alarm = f.alarm, let due = f.occurrence else { continue }
                repeats[f.type + "|" + key(user, alarm, due), default: 0] += count - 1
            }
        }

        // Every other row of an inbox on its client's stream too (the run's own are counted below).
        let runRows = Set(fireRows.values).union(completionRows.values)
        for (user, rows) in inbox {
            for row in rows where !silentTypes.contains(row.type) && !runRows.contains(row.id) && receivedIds[user]?.contains(row.id) != true {
                r.otherRowsNotOnStream += 1
                note("\(row.type) row \(row.id) never reached \(user)'s stream")
            }
        }

        // Expectations, kind by kind and minute by minute.
        var minutes: [Date: Minute] = [:]
        func tally(_ kind: inout Kind, type: String, user: String, alarm: AlarmFacts, rows: [String: Int64]) {
            let k = key(user, alarm.id, alarm.due)
            kind.expected += 1
            var m = minutes[alarm.due] ?? Minute(due: ISOTime.format(alarm.due))
            if type == "alarm_fired" { m.expected += 1 }
            guard let id = rows[k] else {
                kind.notInInbox += 1
                kind.lost += 1
                if type == "alarm_fired" { m.lost += 1 }
                minutes[alarm.due] = m
                note("no \(type) row of \(alarm.id) due \(ISOTime.format(alarm.due)) for \(user)")
                return
            }
            kind.inInbox += 1
            if type == "alarm_fired" { m.inInbox += 1 }
            if receivedIds[user]?.contains(id) == true {
                kind.received += 1
                if type == "alarm_fired" { m.received += 1 }
            } else {
                kind.lostOnStream += 1
                kind.lost += 1
                if type == "alarm_fired" { m.lost += 1 }
                note("\(type) row \(id) of \(alarm.id) due \(ISOTime.format(alarm.due)) never reached \(user)'s stream")
            }
            let dup = repeats[type + "|" + k] ?? 0
            kind.duplicated += dup
            if type == "alarm_fired" { m.duplicated += dup }
            minutes[alarm.due] = m
        }
        var expectedFire = Set<String>()
        var expectedCompletion = Set<String>()
        for a in alarms {
            for member in a.members {
                expectedFire.insert(key(member, a.id, a.due))
                tally(&r.fire, type: "alarm_fired", user: member, alarm: a, rows: fireRows)
            }
            guard a.completed else { continue }
            // Who completed: as the rows say, else as the generator meant; else the owner.
            let by = completer[a.id] ?? a.completer ?? a.members.first
            for member in a.members where member != by {
                expectedCompletion.insert(key(member, a.id, a.due))
                tally(&r.completion, type: "alarm_completed", user: member, alarm: a, rows: completionRows)
            }
        }
        for (k, id) in fireRows where !expectedFire.contains(k) {
            r.fire.unexpected += 1
            note("fire row \(id) (\(k)) that no member expects")
        }
        for (k, id) in completionRows where !expectedCompletion.contains(k) {
            r.completion.unexpected += 1
            note("completion row \(id) (\(k)) that no member expects")
        }
        r.byMinute = minutes.sorted { $0.key < $1.key }.map(\.value)
        r.examples = examples
        return r
    }
}
