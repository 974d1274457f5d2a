import CoreTesting
import NotificationsCore
import Testing

@Suite("Send lanes: webhooks apart from APNs and FCM, capped per account and per destination")
struct SendLanesTests {
    let limits = SendLanes.Limits(providers: 3, webhooks: 4, webhooksPerAccount: 2, webhooksPerDestination: 3)

    @Test("webhooks never take a provider slot: a lane full of one account's slow webhooks leaves APNs and FCM every slot")
    func webhooksApart() {
        var lanes = SendLanes(limits: limits)
        var decisions: [SendLanes.Decision] = []
        for i in 0..<40 { decisions.append(lanes.admit(.webhook(account: i % 2 == 0 ? "a" : "b", destination: "slow.example"))) }
        #expect(decisions.filter { $0 == .send }.count == 3, "the destination's cap")
        #expect(lanes.webhooksInFlight == 3)
        for _ in 0..<3 { #expect(lanes.admit(.provider) == .send) }
        #expect(lanes.admit(.provider) == .full)
        #expect(lanes.inFlight == 6)
    }

    @Test("the caps, each in its order: lane, account, destination", arguments: [
        // (sends already admitted as (account, destination), the next one, the decision)
        ([("a", "x"), ("a", "y")], ("a", "z"), SendLanes.Decision.deferred(.account)),
        ([("a", "x"), ("b", "x"), ("c", "x")], ("d", "x"), .deferred(.destination)),
        ([("a", "x"), ("b", "y"), ("c", "z"), ("d", "w")], ("e", "v"), .deferred(.webhooks)),
        ([("a", "x"), ("b", "x")], ("c", "y"), .send),
        ([("a", "x")], ("a", "y"), .send),
    ] as [([(String, String)], (String, String), SendLanes.Decision)])
    func caps(before: [(String, String)], next: (String, String), expected: SendLanes.Decision) {
        var lanes = SendLanes(limits: limits)
        for (a, d) in before { #expect(lanes.admit(.webhook(account: a, destination: d)) == .send) }
        #expect(lanes.admit(.webhook(account: next.0, destination: next.1)) == expected)
    }

    @Test("a released slot is free again, and the counts return to zero after any order of admits and releases")
    func releaseBalances() {
        var random = SeededRandom(seed: 74)
        var lanes = SendLanes(limits: limits)
        var held: [SendLanes.Lane] = []
        for _ in 0..<5_000 {
            if !held.isEmpty, random.next() % 2 == 0 {
                let i = Int(random.next() % UInt64(held.count))
                lanes.release(held.remove(at: i))
            } else {
                let lane: SendLanes.Lane = random.next() % 3 == 0 ? .provider
                    : .webhook(account: "u\(random.next() % 4)", destination: "h\(random.next() % 3)")
                if lanes.admit(lane) == .send { held.append(lane) }
            }
            #expect(lanes.inFlight == held.count)
            #expect(lanes.providersInFlight <= limits.providers && lanes.webhooksInFlight <= limits.webhooks)
            for a in 0..<4 { #expect(lanes.webhooks(of: "u\(a)") <= limits.webhooksPerAccount) }
            for d in 0..<3 { #expect(lanes.webhooks(to: "h\(d)") <= limits.webhooksPerDestination) }
        }
        for lane in held { lanes.release(lane) }
        #expect(lanes.inFlight == 0)
        #expect((0..<4).allSatisfy { lanes.webhooks(of: "u\($0)") == 0 })
    }
}
