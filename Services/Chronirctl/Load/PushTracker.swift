import Foundation
import Messaging
import Synchronization

/// What the load run expects from the live streams and what arrived: fire pushes per
/// (member, alarm, occurrence), completion pushes per (other member, alarm, occurrence), and
/// anything repeated or unexpected.
final class PushTracker: Sendable {
    /// An alarm created for the run whose next occurrence falls inside the window.
    struct Planned: Sendable {
        var id: String
        var due: Date
        var members: [String]
        /// The member who completes the fire; nil when this fire is left uncompleted.
        var completer: String?
    }

    struct State: Sendable {
        var alarms: [String: Planned] = [:]
        var plannedCompletions = 0
        var expectedFires = 0
        var fires: [String: Int] = [:]
        /// First fire pushes that arrived before their instant (by more than the 50 ms the
        /// clocks of one machine may disagree by); nothing may ring early.
        var earlyFires = 0
        var completionsStarted: [String: Date] = [:]
        var completionsRecorded = 0
        var completionsFailed = 0
        var expectedCompletionPushes = 0
        var completionPushes: [String: Int] = [:]
        var inboxSeen = Set<String>()
        var transportRepeats = 0
        var missedPushes = 0
        var otherPushes = 0
        var firstFireAt: Date?
        var lastPushAt: Date?
        /// Every frame each client received, in order, repeats included (for ``LoadAudit``).
        var frames: [String: [LoadAudit.Row]] = [:]
    }

    let state = Mutex(State())
    let recorder: LoadRecorder

    init(recorder: LoadRecorder) {
        self.recorder = recorder
    }

    func plan(_ p: Planned) {
        state.withLock { s in
            s.alarms[p.id] = p
            s.expectedFires += p.members.count
            if p.completer != nil { s.plannedCompletions += 1 }
        }
    }

    /// Handles one notification received at `at` by `user`; returns the alarm and occurrence
    /// to complete when `user` is the member who marks this fire done.
    func received(_ n: LiveNotification, by user: String, at: Date) -> (alarm: String, occurrence: Date)? {
        state.withLock { s -> (String, Date)? in
            s.frames[user, default: []].append(.init(id: Int64(n.id), user: n.userId, type: n.type, alarm: n.data["alarmId"],
                                                     occurrence: n.data["occurrenceAt"].flatMap(ISOTime.parse),
                                                     completedBy: n.data["completedBy"]))
            guard s.inboxSeen.insert("\(user)|\(n.id)").inserted else {
                s.transportRepeats += 1
                return nil
            }
            s.lastPushAt = at
            guard let alarm = n.data["alarmId"], let occurrence = n.data["occurrenceAt"].flatMap(ISOTime.parse),
                  let planned = s.alarms[alarm], planned.due == occurrence else {
                if n.type == "alarm_missed" { s.missedPushes += 1 } else { s.otherPushes += 1 }
                return nil
            }
            let key = "\(user)|\(alarm)|\(occurrence.timeIntervalSince1970)"
            switch n.type {
            case "alarm_fired" where n.data["snoozeCount"] == "0":
                s.fires[key, default: 0] += 1
                guard s.fires[key] == 1 else { return nil }
                if s.firstFireAt == nil { s.firstFireAt = at }
                if at.timeIntervalSince(occurrence) < -0.05 { s.earlyFires += 1 }
                recorder.fire(lateness: at.timeIntervalSince(occurrence), due: occurrence)
                return planned.completer == user ? (alarm, occurrence) : nil
            case "alarm_completed":
                s.completionPushes[key, default: 0] += 1
                if s.completionPushes[key] == 1, let started = s.completionsStarted["\(alarm)|\(occurrence.timeIntervalSince1970)"] {
                    recorder.fanOut(at.timeIntervalSince(started))
                }
                return nil
            case "alarm_missed":
                s.missedPushes += 1
                return nil
            default:
                s.otherPushes += 1
                return nil
            }
        }
    }

    func completionStarting(alarm: String, occurrence: Date, at: Date) {
        state.withLock { $0.completionsStarted["\(alarm)|\(occurrence.timeIntervalSince1970)"] = at }
    }

    /// The completion was recorded (or not): its other members now expect a push.
    func completionFinished(alarm: String, ok: Bool) {
        state.withLock { s in
            guard ok, let planned = s.alarms[alarm] else {
                s.completionsFailed += 1
                return
            }
            s.completionsRecorded += 1
            s.expectedCompletionPushes += planned.members.count - 1
        }
    }

    /// Every frame each client received so far, repeats included.
    var frames: [String: [LoadAudit.Row]] { state.withLock { $0.frames } }

    /// The alarms the generator heard accepted for the window, with the member meant to complete each.
    var planned: [String: Planned] { state.withLock { $0.alarms } }

    /// Counts so far.
    struct Tally: Sendable {
        var plannedAlarms: Int
        var plannedCompletions: Int
        var expectedFires: Int
        var receivedFires: Int
        var duplicateFires: Int
        var earlyFires: Int = 0
        var completions: Int
        var completionsFailed: Int
        var expectedCompletionPushes: Int
        var receivedCompletionPushes: Int
        var duplicateCompletionPushes: Int
        var transportRepeats: Int
        var missedPushes: Int
        var otherPushes: Int
        var firstFireAt: Date?
        var lastPushAt: Date?

        var complete: Bool {
            receivedFires == expectedFires && completions + completionsFailed >= completionTarget
                && receivedCompletionPushes == expectedCompletionPushes
        }

        /// Completions to wait for: one per planned alarm that has a completer (whose fire
        /// arrives first).
        var completionTarget: Int { plannedCompletions }
    }

    var tally: Tally {
        state.withLock { s in
            Tally(plannedAlarms: s.alarms.count, plannedCompletions: s.plannedCompletions, expectedFires: s.expectedFires, receivedFires: s.fires.count,
                  duplicateFires: s.fires.values.reduce(0) { $0 + max(0, $1 - 1) }, earlyFires: s.earlyFires,
                  completions: s.completionsRecorded, completionsFailed: s.completionsFailed,
                  expectedCompletionPushes: s.expectedCompletionPushes, receivedCompletionPushes: s.completionPushes.count,
                  duplicateCompletionPushes: s.completionPushes.values.reduce(0) { $0 + max(0, $1 - 1) },
                  transportRepeats: s.transportRepeats, missedPushes: s.missedPushes, otherPushes: s.otherPushes,
                  firstFireAt: s.firstFireAt, lastPushAt: s.lastPushAt)
        }
    }
}
