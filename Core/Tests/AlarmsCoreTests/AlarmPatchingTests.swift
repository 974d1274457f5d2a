import AlarmsCore
import Contracts
import Foundation
import Schedules
import Testing
import Wire

/// `Alarm.applying(_:joiningGroupMembers:now:)`: the rules of a partial update, without a
/// database (who may patch, versions and tiers are the handler's and tested through the API).
@Suite("Alarm patching (Domain)")
struct AlarmPatchingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func alarm(active: Bool = true, sharedWith: [String] = [], assignedTo: String? = nil) -> Alarm {
        let schedule = Schedule(type: "monthly", dayOfMonth: 1, monthlyType: "fixed", timeOfDay: "09:00",
                                timezone: "UTC", startDate: Date(timeIntervalSince1970: 1_700_000_000))
        return Alarm(id: "a1", ownerId: "owner", title: "Rent", note: nil, photoURL: nil, photoLocalPath: nil, category: nil,
                     schedule: schedule, soundId: "default", vibrationEnabled: true, snoozeDurationMinutes: 10,
                     preAlarmWarningEnabled: true, preAlarmWarningHours: 24, preAlarmOffsets: [], requireDismissAction: true,
                     isActive: active, isPaused: false, nextFireDate: nil, lastFiredDate: nil, lastCompletedDate: nil,
                     isShared: !sharedWith.isEmpty, sharedWith: sharedWith, groupId: nil, assignedTo: assignedTo,
                     createdAt: now, updatedAt: now, deletedAt: nil, version: 3)
    }

    static func code(_ body: () throws -> Alarm) -> ErrorCode? {
        do { _ = try body(); return nil } catch let e as ServiceError { return e.code } catch { return nil }
    }

    @Test("set, cleared and absent fields: a cleared optional is nil, a cleared required field is refused")
    func fields() throws {
        var patch = AlarmPatch(id: "a1")
        patch.title = .set("  Pay rent  ")
        patch.note = .set("transfer")
        patch.category = .cleared
        let n = try Self.alarm().applying(patch, joiningGroupMembers: nil, now: Self.now)
        #expect(n.title == "Pay rent", "the title is trimmed")
        #expect(n.note == "transfer")
        #expect(n.category == nil)
        #expect(n.soundId == "default" && n.version == 3, "untouched fields and the version stay")

        var bad = AlarmPatch(id: "a1")
        bad.title = .cleared
        #expect(Self.code { try Self.alarm().applying(bad, joiningGroupMembers: nil, now: Self.now) } == .validationFailed)
        bad = AlarmPatch(id: "a1")
        bad.snoozeDurationMinutes = .set(0)
        #expect(Self.code { try Self.alarm().applying(bad, joiningGroupMembers: nil, now: Self.now) } == .validationFailed)
        bad = AlarmPatch(id: "a1")
        bad.schedule = .cleared
        #expect(Self.code { try Self.alarm().applying(bad, joiningGroupMembers: nil, now: Self.now) } == .scheduleInvalid)
    }

    @Test("sharing: a joined group's members are added (not the owner), the assignee must be among the members")
    func sharing() throws {
        var patch = AlarmPatch(id: "a1")
        patch.groupId = .set("g1")
        let n = try Self.alarm(sharedWith: ["friend"]).applying(patch, joiningGroupMembers: ["owner", "m2", "m1"], now: Self.now)
        #expect(n.sharedWith == ["friend", "m1", "m2"])
        #expect(n.groupId == "g1" && n.isShared)

        var unshare = AlarmPatch(id: "a1")
        unshare.sharedWith = .cleared
        let alone = try Self.alarm(sharedWith: ["friend"]).applying(unshare, joiningGroupMembers: nil, now: Self.now)
        #expect(alone.sharedWith.isEmpty && !alone.isShared)

        var assign = AlarmPatch(id: "a1")
        assign.assignedTo = .set("stranger")
        #expect(Self.code { try Self.alarm(sharedWith: ["friend"]).applying(assign, joiningGroupMembers: nil, now: Self.now) } == .validationFailed)
        assign.assignedTo = .set("friend")
        #expect(try Self.alarm(sharedWith: ["friend"]).applying(assign, joiningGroupMembers: nil, now: Self.now).assignedTo == "friend")
    }

    @Test("the next fire is recomputed when the alarm is switched back on or its schedule changes, and only then")
    func nextFire() throws {
        var on = AlarmPatch(id: "a1")
        on.isActive = .set(true)
        let resumed = try Self.alarm(active: false).applying(on, joiningGroupMembers: nil, now: Self.now)
        let next = try #require(resumed.nextFireDate)
        #expect(next > Self.now && resumed.isActive)

        var rename = AlarmPatch(id: "a1")
        rename.title = .set("Rent (flat)")
        #expect(try Self.alarm().applying(rename, joiningGroupMembers: nil, now: Self.now).nextFireDate == nil,
                "a title change leaves the next fire alone")

        var ended = AlarmPatch(id: "a1")
        ended.schedule = .set(Schedule(type: "monthly", dayOfMonth: 1, monthlyType: "fixed", timeOfDay: "09:00",
                                       timezone: "UTC", startDate: Date(timeIntervalSince1970: 1_700_000_000),
                                       endDate: Date(timeIntervalSince1970: 1_700_100_000)))
        let over = try Self.alarm().applying(ended, joiningGroupMembers: nil, now: Self.now)
        #expect(over.nextFireDate == nil && !over.isActive, "a schedule with no occurrence left switches the alarm off")
    }
}
