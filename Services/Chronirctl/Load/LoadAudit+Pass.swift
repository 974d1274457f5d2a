import Foundation
import Messaging

extension LoadAudit {
    /// One audit, phase by phase (``LoadAudit/compute(alarms:inbox:received:planned:)``): the
    /// inbox rows by key and kind, the frames each client received, the other rows, then what
    /// the accepted alarms call for, kind by kind and minute by minute.
    struct AuditPass {
        private var r = Result()
        private var examples: [String] = []
        private let accepted: [String: AlarmFacts]
        // Inbox rows by key, per kind; ids per client.
        private var fireRows: [String: Int64] = [:]
        private var completionRows: [String: Int64] = [:]
        private var completer: [String: String] = [:]
        private var inboxIds: [String: Set<Int64>] = [:]
        private var lastRead: [String: Int64] = [:]
        // Frames per client.
        private var receivedIds: [String: Set<Int64>] = [:]
        private var repeats: [String: Int] = [:]   // by inbox key
        private var minutes: [Date: Minute] = [:]

        init(alarms: [AlarmFacts], planned: Set<String>) {
            accepted = Dictionary(alarms.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            r.acceptedAlarms = alarms.count
            r.plannedNotAccepted = planned.subtracting(accepted.keys).count
            r.acceptedNotPlanned = Set(accepted.keys).subtracting(planned).count
            for a in alarms {
                guard let group = a.groupMembers else { continue }
                let missing = group.subtracting(a.members)
                guard !missing.isEmpty else { continue }
                r.groupAlarmsShort += 1
                r.groupMembersMissing += missing.count
                if examples.count < 12 { examples.append("alarm \(a.id) lacks \(missing.count) of its group's members") }
            }
        }

        func result() -> Result {
            var out = r
            out.byMinute = minutes.sorted { $0.key < $1.key }.map(\.value)
            out.examples = examples
            return out
        }

        private mutating func note(_ s: String) { if examples.count < 12 { examples.append(s) } }

        private static func key(_ user: String, _ alarm: String, _ due: Date) -> String {
            "\(user)|\(alarm)|\(Int64(due.timeIntervalSince1970 * 1000))"
        }

        /// The accepted alarm a row of `type` is the run's push of, if it is one.
        private func ofRun(_ row: Row, _ type: String) -> AlarmFacts? {
            guard row.type == type, let a = row.alarm.flatMap({ accepted[$0] }), row.occurrence == a.due else { return nil }
            return a
        }

        /// Inbox rows by key, per kind; ids per client.
        mutating func readInboxes(_ inbox: [String: [Row]]) {
            for (user, rows) in inbox {
                for row in rows {
                    inboxIds[user, default: []].insert(row.id)
                    lastRead[user] = max(lastRead[user] ?? row.id, row.id)
                    if let a = ofRun(row, "alarm_fired") {
                        let k = Self.key(user, a.id, a.due)
                        if fireRows[k] != nil { r.fire.unexpected += 1; note("second fire row \(row.id) of \(a.id) for \(user)") }
                        fireRows[k] = row.id
                    } else if let a = ofRun(row, "alarm_completed") {
                        let k = Self.key(user, a.id, a.due)
                        if completionRows[k] != nil { r.completion.unexpected += 1; note("second completion row \(row.id) of \(a.id) for \(user)") }
                        completionRows[k] = row.id
                        if let by = row.completedBy { completer[a.id] = by }
                    }
                }
            }
        }

        /// Frames per client: repeats, misroutes, what arrived.
        mutating func readFrames(_ received: [String: [Row]]) {
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
                    repeats[f.type + "|" + Self.key(user, alarm, due), default: 0] += count - 1
                }
            }
        }

        /// Every other row of an inbox on its client's stream too (the run's own are counted in
        /// ``tallyExpectations(_:)``).
        mutating func checkOtherRows(_ inbox: [String: [Row]]) {
            let runRows = Set(fireRows.values).union(completionRows.values)
            for (user, rows) in inbox {
                for row in rows where !silentTypes.contains(row.type) && !runRows.contains(row.id) && receivedIds[user]?.contains(row.id) != true {
                    r.otherRowsNotOnStream += 1
                    note("\(row.type) row \(row.id) never reached \(user)'s stream")
                }
            }
        }

        /// Expectations, kind by kind and minute by minute.
        mutating func tallyExpectations(_ alarms: [AlarmFacts]) {
            var expectedFire = Set<String>()
            var expectedCompletion = Set<String>()
            for a in alarms {
                for member in a.members {
                    expectedFire.insert(Self.key(member, a.id, a.due))
                    tally(\.fire, type: "alarm_fired", user: member, alarm: a)
                }
                guard a.completed else { continue }
                // Who completed: as the rows say, else as the generator meant; else the owner.
                let by = completer[a.id] ?? a.completer ?? a.members.first
                for member in a.members where member != by {
                    expectedCompletion.insert(Self.key(member, a.id, a.due))
                    tally(\.completion, type: "alarm_completed", user: member, alarm: a)
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
        }

        /// One expected push of `kind` to `user`: in the inbox, on the stream, repeated.
        private mutating func tally(_ kind: WritableKeyPath<Result, Kind>, type: String, user: String, alarm: AlarmFacts) {
            let rows = type == "alarm_fired" ? fireRows : completionRows
            let k = Self.key(user, alarm.id, alarm.due)
            let fire = type == "alarm_fired"
            r[keyPath: kind].expected += 1
            var m = minutes[alarm.due] ?? Minute(due: ISOTime.format(alarm.due))
            if fire { m.expected += 1 }
            defer { minutes[alarm.due] = m }
            guard let id = rows[k] else {
                r[keyPath: kind].notInInbox += 1
                r[keyPath: kind].lost += 1
                if fire { m.lost += 1 }
                note("no \(type) row of \(alarm.id) due \(ISOTime.format(alarm.due)) for \(user)")
                return
            }
            r[keyPath: kind].inInbox += 1
            if fire { m.inInbox += 1 }
            if receivedIds[user]?.contains(id) == true {
                r[keyPath: kind].received += 1
                if fire { m.received += 1 }
            } else {
                r[keyPath: kind].lostOnStream += 1
                r[keyPath: kind].lost += 1
                if fire { m.lost += 1 }
                note("\(type) row \(id) of \(alarm.id) due \(ISOTime.format(alarm.due)) never reached \(user)'s stream")
            }
            let dup = repeats[type + "|" + k] ?? 0
            r[keyPath: kind].duplicated += dup
            if fire { m.duplicated += dup }
        }
    }
}
