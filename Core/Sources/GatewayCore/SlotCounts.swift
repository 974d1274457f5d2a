/// How many of a shared resource each principal holds, with a cap per principal: the
/// connections of one address (`CHRONIR_CONNECTIONS_PER_ADDRESS`), the photo bodies being read
/// for one account (`CHRONIR_PHOTO_UPLOADS_PER_ACCOUNT`). Checking and counting are one step,
/// so concurrent takers under one lock cannot pass the cap.
public struct SlotCounts: Sendable, Equatable {
    private var held: [String: Int] = [:]
    /// The most one principal may hold (at least 1).
    public let cap: Int

    public init(cap: Int) {
        self.cap = max(1, cap)
    }

    /// Counts one more for `principal`; false (nothing counted) when it holds ``cap`` already.
    public mutating func take(_ principal: String) -> Bool {
        let n = held[principal, default: 0]
        guard n < cap else { return false }
        held[principal] = n + 1
        return true
    }

    /// Uncounts one ``take(_:)`` counted; nothing when `principal` holds none (a double release
    /// cannot lend another principal's slot).
    public mutating func give(_ principal: String) {
        guard let n = held[principal] else { return }
        held[principal] = n > 1 ? n - 1 : nil
    }

    /// What `principal` holds now.
    public func count(_ principal: String) -> Int { held[principal, default: 0] }

    /// Principals holding anything (a principal that gave everything back is forgotten).
    public var principals: Int { held.count }
}
