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
        /// For an alarm of one of the run's groups: the group's members as the generator formed
        /// it (the owner among them). The load changes no membership afterwards, so the alarm's
        /// members must be exactly these; a member missing is a fire nobody would call for.
        var groupMembers: Set<String>? = nil
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
        /// Group alarms whose members are not their group's, and the member-alarm pairs missing:
        /// the expectations above are the suite's own, so a member an alarm never got is not
        /// counted lost there.
        var groupAlarmsShort = 0
        var groupMembersMissing = 0
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
            if groupAlarmsShort > 0 {
                out.append("\(groupAlarmsShort) group alarms lack members of their group (\(groupMembersMissing) member-alarm pairs)")
            }
            if plannedNotAccepted > 0 { out.append("\(plannedNotAccepted) alarms answered 201 that the suite does not hold") }
            if unreadable > 0 { out.append("\(unreadable) users' alarms or inbox could not be read back: the audit is incomplete") }
            return out
        }
    }

    /// Counts. `inbox` and `received` are by client (user id); `received` in arrival order,
    /// repeats included. `planned`: the alarm ids the generator heard accepted.
    static func compute(alarms: [AlarmFacts], inbox: [String: [Row]], received: [String: [Row]], planned: Set<String>) -> Result {
        var pass = AuditPass(alarms: alarms, planned: planned)
        pass.readInboxes(inbox)
        pass.readFrames(received)
        pass.checkOtherRows(inbox)
        pass.tallyExpectations(alarms)
        return pass.result()
    }
}
