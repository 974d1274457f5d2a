import Foundation
@testable import Messaging
import Synchronization
import Testing

/// Issue 74: one actor (an account the gateway acts for) holds at most its share of a server's
/// handler slots; past it, its requests are refused at once (429 `CA019`), and other actors are
/// served meanwhile.
@Suite("RPC slots per actor")
struct PerActorCapTests {
    @Test("an actor with 3 slow requests in progress gets CA019 for the 4th to 6th at once; another actor is answered meanwhile; the slots come back")
    func capPerActor() async throws {
        let f = try RPCFixture(maxPerActor: 3)
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: String.self) { group in
            for i in 0..<6 {
                group.addTask {
                    do {
                        _ = try await f.client.call(Echo.self, .init(text: "slow \(i)", delayMs: 1_500), actor: "hog")
                        return "ok"
                    } catch let e as ServiceError {
                        return e.code.rawValue
                    } catch {
                        return "\(error)"
                    }
                }
            }
            // Another account, while the hog's three are in progress.
            group.addTask {
                try? await Task.sleep(for: .milliseconds(300))
                let r = try? await f.client.call(Echo.self, .init(text: "other"), actor: "other")
                return r?.text == "other" && ContinuousClock.now - started < .milliseconds(1_200) ? "other ok" : "other late"
            }
            var all: [String] = []
            for await o in group { all.append(o) }
            return all
        }
        #expect(outcomes.filter { $0 == "ok" }.count == 3, "\(outcomes)")
        #expect(outcomes.filter { $0 == "CA019" }.count == 3, "\(outcomes)")
        #expect(outcomes.contains("other ok"), "\(outcomes)")
        // Done: the hog has its slots back.
        let again = try await f.client.call(Echo.self, .init(text: "again"), actor: "hog")
        #expect(again.text == "again")
        // Requests with no actor (services' own) are not counted per actor.
        let bare = try await f.client.call(Echo.self, .init(text: "bare"))
        #expect(bare.text == "bare")
        await f.shutdown()
    }
}
