import AlarmsCore
import Contracts
import Foundation
import Testing
import Wire

/// `AlarmSharing`: who may be in `sharedWith`, leaving, and whom a change is told to — pure
/// rules, without a database (the API tests show them through the running suite).
@Suite("Alarm sharing (Domain)")
struct AlarmSharingTests {
    struct Consent: Sendable, CustomTestStringConvertible {
        var requested: [String]
        var previous: [String]
        var group: [String]
        /// The people refused (nil: accepted).
        var refused: [String]?
        var testDescription: String { "\(requested) after \(previous), group \(group)" }
    }

    @Test("sharedWith keeps or drops members and adds only the group's; anyone else is CA035 naming field and people",
          arguments: [
              Consent(requested: [], previous: ["ann"], group: [], refused: nil),
              Consent(requested: ["ann"], previous: ["ann", "bob"], group: [], refused: nil),
              Consent(requested: ["ann", "cy"], previous: ["ann"], group: [], refused: ["cy"]),
              Consent(requested: ["cy", "dee"], previous: [], group: [], refused: ["cy", "dee"]),
              Consent(requested: ["ann", "gus"], previous: ["ann"], group: ["gus", "hal"], refused: nil),
              Consent(requested: ["gus", "zed"], previous: [], group: ["gus"], refused: ["zed"]),
          ])
    func consent(_ c: Consent) {
        do {
            try AlarmSharing.checkConsent(c.requested, allowed: AlarmSharing.allowed(previous: c.previous, groupMembers: c.group))
            #expect(c.refused == nil, "accepted, expected a refusal of \(c.refused ?? [])")
        } catch let e as ServiceError {
            #expect(e.code == .sharingNeedsInvitation)
            #expect(e.code.httpStatus == 400)
            #expect(e.details?["field"] == .string("sharedWith"))
            #expect(e.details?["userIds"] == .array((c.refused ?? []).map { .string($0) }), "\(e.message)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    struct Leave: Sendable, CustomTestStringConvertible {
        var member: String
        var sharedWith: [String]
        var assignedTo: String?
        /// sharedWith and assignee after, nil when the member is not one.
        var after: (sharedWith: [String], assignedTo: String?)?
        var testDescription: String { "\(member) leaves \(sharedWith) (assignee \(assignedTo ?? "none"))" }
    }

    @Test("a member leaving goes off sharedWith and loses the assignment; the owner and strangers are not members",
          arguments: [
              Leave(member: "ann", sharedWith: ["ann", "bob"], assignedTo: nil, after: (["bob"], nil)),
              Leave(member: "ann", sharedWith: ["ann"], assignedTo: "ann", after: ([], nil)),
              Leave(member: "bob", sharedWith: ["ann", "bob"], assignedTo: "ann", after: (["ann"], "ann")),
              Leave(member: "owner", sharedWith: ["ann"], assignedTo: nil, after: nil),
              Leave(member: "zed", sharedWith: ["ann"], assignedTo: nil, after: nil),
          ])
    func leave(_ l: Leave) {
        let a = AlarmPatchingTests.alarm(sharedWith: l.sharedWith, assignedTo: l.assignedTo)
        let n = AlarmSharing.removing(l.member, from: a)
        #expect(n?.sharedWith == l.after?.sharedWith)
        #expect(n?.assignedTo == l.after?.assignedTo)
        if let n { #expect(n.isShared == !n.sharedWith.isEmpty) }
    }

    struct Told: Sendable, CustomTestStringConvertible {
        var before: [String]?
        var after: [String]
        var actor: String?
        var told: [String]
        var testDescription: String { "\(before ?? []) → \(after) by \(actor ?? "the system")" }
    }

    @Test("a change is told to every member before or after it but the one who made it",
          arguments: [
              Told(before: [], after: [], actor: "owner", told: []),
              Told(before: ["ann"], after: ["ann"], actor: "owner", told: ["ann"]),
              Told(before: ["ann"], after: ["ann"], actor: "ann", told: ["owner"]),
              Told(before: ["ann", "bob"], after: ["bob"], actor: "owner", told: ["ann", "bob"]),
              Told(before: nil, after: ["ann"], actor: "owner", told: ["ann"]),
              Told(before: ["ann"], after: [], actor: nil, told: ["ann", "owner"]),
          ])
    func told(_ t: Told) {
        let before = t.before.map { AlarmPatchingTests.alarm(sharedWith: $0) }
        let after = AlarmPatchingTests.alarm(sharedWith: t.after)
        #expect(AlarmSharing.syncMembers(before: before, after: after, actor: t.actor) == t.told)
    }
}
