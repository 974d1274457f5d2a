import Foundation

/// Who owns which alarms and when they fire: users in groups of `groupSize` (a `groupShare`
/// of all users) and alone; each user's share of the alarms (a group's owner creates its
/// members' shares as group alarms); due minutes spread over the window with `spike` fires in
/// one minute. The same `rng` sequence gives the same plan.
struct LoadPlan: Sendable {
    struct AlarmSpec: Sendable {
        var owner: Int
        var group: Int?
        var minute: Int
    }

    /// Member user indexes of each group; the first is the owner.
    var groups: [[Int]]
    var alarms: [AlarmSpec]
    var minutes: Int
    var spikeMinute: Int

    init(users: Int, alarms total: Int, groupShare: Double, groupSize: Int, minutes: Int, spike: Int, spikeMinute: Int,
         using rng: inout some RandomNumberGenerator) {
        let grouped = groupSize >= 2 ? Int((Double(users) * groupShare / Double(groupSize)).rounded(.down)) : 0
        groups = (0..<grouped).map { g in Array((g * groupSize)..<((g + 1) * groupSize)) }
        self.minutes = minutes
        self.spikeMinute = spikeMinute
        var groupOf = [Int?](repeating: nil, count: users)
        for (g, members) in groups.enumerated() { for m in members { groupOf[m] = g } }

        // Due minutes: `spike` in the spike minute, the rest spread evenly over the others.
        var slots = [Int](repeating: spikeMinute, count: min(spike, total))
        let rest = total - slots.count
        let others = (0..<minutes).filter { $0 != spikeMinute }
        for k in 0..<rest { slots.append(others.isEmpty ? spikeMinute : others[k % others.count]) }
        slots.shuffle(using: &rng)

        var specs: [AlarmSpec] = []
        specs.reserveCapacity(total)
        for k in 0..<total {
            let user = k % users
            if let g = groupOf[user] {
                specs.append(AlarmSpec(owner: groups[g][0], group: g, minute: slots[k]))
            } else {
                specs.append(AlarmSpec(owner: user, group: nil, minute: slots[k]))
            }
        }
        // Created in due order, so the earliest are in place first.
        alarms = specs.sorted { $0.minute < $1.minute }
    }
}
