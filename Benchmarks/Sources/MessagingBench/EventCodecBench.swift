import Foundation
import Messaging

// The JSON work of one event the size and shape of `alarms.alarm-completed` (an occurrence mark
// carrying the alarm's state: nested objects, arrays, optionals, string enums), which every
// consumer of the alarms stream decodes and the alarms service encodes once per mark.

/// A stand-in for `AlarmsEvents.OccurrenceMarked` with the same members and nesting (the
/// contracts module is not a product the benchmarks can import).
public struct SampleMark: Codable, Sendable {
    public enum Status: String, Codable, Sendable { case completed, skipped }
    public struct Schedule: Codable, Sendable {
        public enum Kind: String, Codable, Sendable { case weekly, monthlyDate, annual, custom }
        var type: Kind
        var interval: Int
        var daysOfWeek: [Int]
        var timeOfDay: String
        var timeZone: String
    }
    public struct State: Codable, Sendable {
        var id: String
        var ownerId: String
        var title: String
        var schedule: Schedule
        var nextFireDate: Date?
        var isActive: Bool
        var isPaused: Bool
        var deleted: Bool
        var preAlarmOffsetsMinutes: [Int]
        var members: [String]
        var alertMembers: [String]
        var groupId: String?
        var assignedTo: String?
        var snoozeDurationMinutes: Int
        var version: Int
    }
    var alarm: State
    var completionId: String
    var status: Status
    var scheduledDate: Date
    var completedAt: Date
    var userId: String?
    var userDisplayName: String?

    /// The alarm's version (a value the benchmark reads back, so the decoding is not dropped).
    public var alarmVersion: Int { alarm.version }
}

public let sampleMark: SampleMark = {
    let members = (1...5).map { "01a2aa2c-6f4e-7f55-9c1b-1f2d3e4f5a\(String(format: "%02d", $0))" }
    return SampleMark(
        alarm: .init(id: "01a2aa2c-6f4e-7f55-9c1b-1f2d3e4f5a6b", ownerId: members[0], title: "Change HVAC Filter",
                     schedule: .init(type: .weekly, interval: 2, daysOfWeek: [1, 4], timeOfDay: "09:30", timeZone: "Europe/Berlin"),
                     nextFireDate: Date(timeIntervalSince1970: 1_772_960_400), isActive: true, isPaused: false, deleted: false,
                     preAlarmOffsetsMinutes: [1440, 60], members: members, alertMembers: members, groupId: members[1],
                     assignedTo: nil, snoozeDurationMinutes: 10, version: 7),
        completionId: "01a2aa2c-6f4e-7f55-9c1b-1f2d3e4f5a7c", status: .completed,
        scheduledDate: Date(timeIntervalSince1970: 1_772_355_600), completedAt: Date(timeIntervalSince1970: 1_772_355_612),
        userId: members[2], userDisplayName: "Sam")
}()

/// Nanoseconds to encode `sampleMark` once and decode it once (JSONCoding, as the services do),
/// averaged over `count` on this thread.
public func eventCodecNanos(count: Int) throws -> (encode: Double, decode: Double) {
    let clock = ContinuousClock()
    var bytes = 0
    let start = clock.now
    var last = Data()
    for _ in 0..<count {
        last = try JSONCoding.encode(sampleMark)
        bytes &+= last.count
    }
    let encoded = start.duration(to: clock.now)
    var check = 0
    let again = clock.now
    for _ in 0..<count {
        check &+= try JSONCoding.decoder().decode(SampleMark.self, from: last).alarm.version
    }
    let decoded = again.duration(to: clock.now)
    precondition(check == 7 * count && bytes > 0)
    func nanos(_ d: Duration) -> Double {
        (Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) * 1e-9) / Double(count)
    }
    return (nanos(encoded), nanos(decoded))
}
