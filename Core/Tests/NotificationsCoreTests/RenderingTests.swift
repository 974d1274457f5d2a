import Contracts
import Foundation
import NotificationsCore
import Testing

/// What the renderers make of each event (who is told, what they read, how urgently), the retry
/// schedule and the order a batch is numbered in — without a notifications service (these were
/// in the service's `NotificationRenderingTests`).
@Suite("Notification rendering (core)")
struct RenderingTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("a completion push reads like Appendix C, goes to the one recipient, names the group, and not to who turned them off")
    func completion() throws {
        let push = SchedulerEvents.CompletionPush(alarmId: "a1", title: "Change HVAC Filter", occurrenceAt: now, completionId: "c1",
                                                  completedBy: "partner_uid", completedByName: "Partner", recipient: "u2", groupId: "g1")
        let n = try #require(NotificationRenderer.completed(push).first)
        #expect(n.recipients == ["u2"])
        #expect(n.content.title == "✓ Change HVAC Filter — Done")
        #expect(n.content.body == "Marked complete by Partner")
        #expect(n.content.data["type"] == "alarm_completed")
        #expect(n.content.data["completedBy"] == "partner_uid")
        #expect(n.content.data["groupId"] == "g1")
        let group = NotificationRenderer.GroupText(name: "Flat 3", names: ["partner_uid": "Partner"])
        #expect(NotificationRenderer.completed(push, group: group).first?.content.body == "Marked complete by Partner in Flat 3")
        var off = group
        off.completionPushesOff = ["u2"]
        #expect(NotificationRenderer.completed(push, group: off).isEmpty, "u2 turned completion pushes off")
    }

    @Test("a fire alerts the alert members, urgently, naming the group; an assigned fire tells the others without ringing")
    func fire() throws {
        let fired = SchedulerEvents.AlarmFired(alarmId: "alarm_abc123", title: "Change HVAC Filter", ownerId: "o", occurrenceAt: now, dueAt: now,
                                               firedAt: now, members: ["o", "m"], alertMembers: ["m"], groupId: "group_xyz789",
                                               assignedTo: "m", snoozeCount: 0)
        let all = NotificationRenderer.fired(fired, group: .init(name: "Flat 3", names: ["m": "Mo", "o": "Olu"]))
        #expect(all.count == 2)
        let n = try #require(all.first)
        #expect(n.recipients == ["m"])
        #expect(n.content.urgent)
        #expect(n.content.title == "Chronir: Change HVAC Filter")
        #expect(n.content.body == "Assigned to you in Flat 3")
        #expect(n.content.deepLink == "chronir://alarm/alarm_abc123")
        #expect(n.content.data["groupId"] == "group_xyz789")
        let others = try #require(all.last)
        #expect(others.recipients == ["o"])
        #expect(!others.content.urgent, "the others get a standard notification")
        #expect(others.content.body == "Ringing for Mo in Flat 3")
        #expect(others.content.data["assignedTo"] == "m")
        var unassigned = fired
        unassigned.assignedTo = nil
        unassigned.alertMembers = ["o", "m"]
        let shared = NotificationRenderer.fired(unassigned, group: .init(name: "Flat 3"))
        #expect(shared.count == 1 && shared[0].content.body == "Shared alarm from Flat 3" && shared[0].recipients == ["o", "m"])
        #expect(NotificationRenderer.fired(unassigned).first?.content.body == "Shared alarm from your group", "a group not known yet")
    }

    @Test("back-off doubles from the base, is capped, jittered into [½, 1], and honours Retry-After")
    func backoff() {
        let p = RetryPolicy(base: .seconds(1), max: .seconds(60), tries: 5)
        #expect(p.delay(after: 1, jitter: 1) == 1)
        #expect(p.delay(after: 3, jitter: 1) == 4)
        #expect(p.delay(after: 10, jitter: 1) == 60)
        #expect(p.delay(after: 3, jitter: 0.5) == 2)
        #expect(p.delay(after: 1, retryAfter: 30, jitter: 1) == 30)
        #expect(p.delay(after: 1, retryAfter: 3600, jitter: 1) == 60)
        for _ in 0..<100 {
            let d = p.delay(after: 2)
            #expect(d >= 1 && d <= 2)
        }
    }

    @Test("an invitation reaches a registered invitee with the invite deep link; an unregistered one gets nothing here")
    func invitation() throws {
        let i = Invitation(id: "inv_abc123", type: "group", referenceId: "g1", referenceName: "Household", inviterId: "lex",
                           inviterDisplayName: "Lex", inviteeEmail: "p@example.com", status: "pending", createdAt: now,
                           expiresAt: now.addingTimeInterval(7 * 86_400), acceptedAt: nil, acceptedBy: nil,
                           deepLink: "https://chronir.app/invite/inv_abc123")
        let n = try #require(NotificationRenderer.invitationReceived(.init(invitation: i, userId: "partner", userDisplayName: nil, reason: nil)))
        #expect(n.recipients == ["partner"])
        #expect(n.content.title == "Chronir Invite")
        #expect(n.content.body == "Lex invited you to the Household group")
        #expect(n.content.data["deepLink"] == "https://chronir.app/invite/inv_abc123")
        #expect(n.content.data["type"] == "invitation_received")
        #expect(NotificationRenderer.invitationReceived(.init(invitation: i, userId: nil, userDisplayName: nil, reason: nil)) == nil)
        let accepted = NotificationRenderer.invitationAccepted(.init(invitation: i, userId: "partner", userDisplayName: "Partner", reason: nil))
        #expect(accepted.recipients == ["lex"])
        #expect(accepted.content.body == "Partner joined Household")
    }

    @Test("a batch is numbered fires and warnings due now first, then the rest due now, then what waits for its instant; stable within each")
    func urgentFirstOrder() {
        func n(_ type: String, at: Date?) -> RenderedNotification {
            RenderedNotification(recipients: ["u"], content: PushContent(type: type, title: "", body: "", data: [:], urgent: type == "alarm_fired",
                                                                         deepLink: nil, collapseKey: nil), deliverAt: at)
        }
        let later = now.addingTimeInterval(8), past = now.addingTimeInterval(-1)
        let batch: [(RenderedNotification, Int)] = [
            (n("alarm_fired", at: later), 0), (n("alarm_completed", at: nil), 1), (n("alarm_fired", at: past), 2),
            (n("alarm_missed", at: nil), 3), (n("pre_alarm", at: now), 4), (n("pre_alarm", at: later), 5), (n("alarm_completed", at: nil), 6),
        ]
        #expect(DeliveryOrder.urgentFirst(batch, now: now).map(\.1) == [2, 4, 1, 3, 6, 0, 5])
        // One alarm's "Done" for occurrence N and its next fire, due now after a lost lead (one
        // collapse key): the "Done" stays first, or the phone would replace the ring with it.
        func keyed(_ type: String, _ key: String, at: Date?) -> RenderedNotification {
            var r = n(type, at: at)
            r.content.collapseKey = key
            return r
        }
        let sameAlarm: [(RenderedNotification, Int)] = [
            (n("alarm_missed", at: nil), 0), (keyed("alarm_completed", "fire-a", at: nil), 1), (keyed("alarm_fired", "fire-a", at: past), 2),
            (keyed("alarm_fired", "fire-b", at: past), 3),
        ]
        #expect(DeliveryOrder.urgentFirst(sameAlarm, now: now).map(\.1) == [1, 2, 3, 0])
        // Already in order: kept as it is.
        let ordered = [batch[2], batch[4], batch[1], batch[0]]
        #expect(DeliveryOrder.urgentFirst(ordered, now: now).map(\.1) == [2, 4, 1, 0])
    }
}
