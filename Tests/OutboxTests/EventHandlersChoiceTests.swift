import Contracts
import Foundation
import Messaging
import Outbox
import Testing

/// A consumer names every type of its stream, handled or ignored, or it does not start.
@Suite("Event handlers: every type of a stream is a choice")
struct EventHandlersChoiceTests {
    @Test("a type neither handled nor ignored is refused, by name")
    func unnamedTypeIsRefused() throws {
        var h = EventHandlers(InvitationsEvents.self)
        h.on(InvitationsEvents.accepted) { _, _, _ in }
        h.ignore(InvitationsEvents.created, InvitationsEvents.declined, InvitationsEvents.revoked)
        #expect(h.unchosen == [InvitationsEvents.expired.type])
        #expect(throws: EventHandlersIncomplete.self) { try h.checkChoices(for: "invitations") }
        do {
            try h.checkChoices(for: "invitations")
        } catch {
            #expect("\(error)".contains("invitations.invitation-expired"))
        }
        h.ignore(InvitationsEvents.expired)
        #expect(h.unchosen.isEmpty)
        try h.checkChoices(for: "invitations")
    }

    @Test("handlers of one stream are refused by a consumer of another")
    func wrongStreamIsRefused() {
        var h = EventHandlers(BillingEvents.self)
        h.on(BillingEvents.entitlementChanged) { _, _, _ in }
        #expect(throws: EventHandlersIncomplete.self) { try h.checkChoices(for: "accounts") }
    }

    @Test("merged handlers keep both sides' choices; a batch handler counts as handling")
    func mergingKeepsChoices() throws {
        var own = EventHandlers(SchedulerEvents.self)
        own.onBatch([SchedulerEvents.alarmFired]) { _, _ in }
        own.ignore(SchedulerEvents.preAlarmDue, SchedulerEvents.occurrenceMissed, SchedulerEvents.completionPush, SchedulerEvents.fireWithdrawn)
        var extra = EventHandlers(SchedulerEvents.self)
        extra.on(SchedulerEvents.fireWithdrawn) { _, _, _ in }
        extra.ignore(SchedulerEvents.alarmFired, SchedulerEvents.preAlarmDue, SchedulerEvents.occurrenceMissed, SchedulerEvents.completionPush)
        let merged = own.merging(extra)
        #expect(merged.handles(SchedulerEvents.alarmFired.type))
        #expect(merged.handles(SchedulerEvents.fireWithdrawn.type))
        #expect(!merged.handles(SchedulerEvents.preAlarmDue.type))
        try merged.checkChoices(for: "scheduler")
    }

    @Test("every stream's catalogue lists distinct types of that stream")
    func cataloguesAreConsistent() {
        let catalogues: [(String, [any EventType])] = [
            (AccountsEvents.stream, AccountsEvents.all), (AlarmsEvents.stream, AlarmsEvents.all),
            (SchedulerEvents.stream, SchedulerEvents.all), (NotificationsEvents.stream, NotificationsEvents.all),
            (InvitationsEvents.stream, InvitationsEvents.all), (BillingEvents.stream, BillingEvents.all),
        ]
        for (stream, all) in catalogues {
            let types = all.map(\.type)
            #expect(Set(types).count == types.count, "\(stream) lists a type twice")
            #expect(types.allSatisfy { $0.hasPrefix("\(stream).") }, "\(stream): \(types)")
        }
    }

    @Test("a typed event matches its envelope type in a switch and decodes its payload")
    func typedEventMatchesAndDecodes() throws {
        let payload = BillingEvents.EntitlementChanged(userId: "u1", tier: .plus, previousTier: .free, expiresAt: nil, reason: "test")
        let envelope = Envelope(type: BillingEvents.entitlementChanged.type, source: "billing/1", payload: try JSONCoding.encode(payload))
        switch envelope.type {
        case BillingEvents.entitlementChanged: break
        default: Issue.record("the typed event did not match its own type")
        }
        #expect(try envelope.payload(BillingEvents.entitlementChanged).userId == "u1")
    }
}
