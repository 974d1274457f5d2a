import Contracts
import Foundation

/// Where photo bytes live, by object key (`users/<owner>/alarms/<alarm>/photo-<tag>.<ext>`).
/// The photo's description (type, tag, size, key) is always a row of `alarms.photos`; the
/// bytes are in the storage. Keys are content-addressed, so a replaced photo gets a new key
/// and a reader never pairs one photo's tag with another's bytes.
protocol PhotoStorage: Sendable {
    /// A name for logs and `chronirctl health`.
    var name: String { get }
    /// Stores `data` under `key` (overwriting).
    func put(key: String, data: Data, type: PhotoType) async throws
    /// The bytes under `key`, or nil when there are none.
    func get(key: String) async throws -> Data?
    /// Removes `key`; removing a missing key succeeds.
    func delete(key: String) async throws
}
