import Foundation
import Synchronization

/// The gateway replicas a load run spreads its devices over (`--url a,b`): each device (keyed by
/// its token or user) sticks to one, and one that just failed at the transport level (killed,
/// restarting) is passed over for a while (2 s, doubling while it keeps failing, up to 30 s), so a
/// device's next attempt goes to another.
final class Gateways: Sendable {
    /// The base URLs, without a trailing slash.
    let bases: [String]
    private let downUntil: Mutex<[(until: ContinuousClock.Instant, failures: Int, noted: ContinuousClock.Instant)?]>

    init(_ list: String) {
        let bases = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.bases = bases.isEmpty ? ["http://127.0.0.1:8080"] : bases
        downUntil = Mutex(Array(repeating: nil, count: self.bases.count))
    }

    /// The gateway for `key`: its own unless that one failed lately. Once a failed gateway's
    /// pause is over, one request probes it (the others keep away for 3 s more) rather than
    /// every device's at once.
    func base(for key: String) -> String {
        let home = Int(UInt(bitPattern: Self.hash(key)) % UInt(bases.count))
        guard bases.count > 1 else { return bases[home] }
        return downUntil.withLock { down in
            let now = ContinuousClock.now
            for step in 0..<bases.count {
                let i = (home + step) % bases.count
                guard let d = down[i] else { return bases[i] }
                if d.until > now { continue }
                down[i] = (now + .seconds(3), d.failures, d.noted)
                return bases[i]
            }
            return bases[home]
        }
    }

    /// Notes a transport failure at `base`.
    func failed(_ base: String) {
        guard bases.count > 1, let i = bases.firstIndex(of: base) else { return }
        downUntil.withLock { down in
            let now = ContinuousClock.now
            // Failures of requests that were under way together count once.
            if let d = down[i], d.noted + .seconds(1) > now { return }
            let failures = (down[i]?.failures ?? 0) + 1
            down[i] = (now + .seconds(min(30, 2 << min(failures - 1, 4))), failures, now)
        }
    }

    /// Notes an answer from `base`: it is up.
    func answered(_ base: String) {
        guard bases.count > 1, let i = bases.firstIndex(of: base) else { return }
        downUntil.withLock { if $0[i] != nil { $0[i] = nil } }
    }

    /// FNV-1a: the same device goes to the same gateway in every run.
    private static func hash(_ key: String) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in key.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: h)
    }
}
