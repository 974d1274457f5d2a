import Contracts
import Foundation
import Messaging
import Persistence

/// The sound catalogue per caller (US-7.2): what their tier may choose.
struct SoundHandlers: Sendable {
    let store: AlarmStore

    func register(into router: inout RPCRouter) {
        router.on(AlarmsMethods.Sounds.self) { _, ctx in
            let actor = try ctx.requireActor()
            let tier = try await store.database.transaction { c in try await store.tier(of: actor, on: c) }
            return SoundList(sounds: Sound.catalogue.map { s in
                var s = s
                s.available = tier >= s.tier
                return s
            }, tier: tier)
        }
    }
}
