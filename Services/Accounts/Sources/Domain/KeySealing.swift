import Crypto
import Foundation

/// Encryption at rest of the token-signing keys: each private key is stored as an AES-256-GCM
/// sealed box (nonce, ciphertext and tag, base64) with its kid as authenticated data, under
/// the key-encryption key (KEK) of the environment (read by ``AccountsConfig``):
///
/// - `CHRONIR_KEY_ENCRYPTION_KEY`: 32 random bytes, base64 (`openssl rand -base64 32`), or
///   `CHRONIR_KEY_ENCRYPTION_KEY_FILE`: a file holding that (a container secret);
/// - `CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS` (or `_PREVIOUS_FILE`): the KEK before, while it is
///   changed: keys sealed with it are opened and sealed again with the current one at start.
///
/// Without a KEK the keys are stored as they are (development, `make run`), and a warning says so.
struct KeySealing: Sendable {
    static let variable = "CHRONIR_KEY_ENCRYPTION_KEY"
    static let previousVariable = "CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS"

    /// The KEK keys are sealed with; nil: stored unencrypted.
    let current: SymmetricKey?
    /// The KEK being replaced: opens what it sealed.
    let previous: SymmetricKey?

    init(current: SymmetricKey?, previous: SymmetricKey? = nil) {
        self.current = current
        self.previous = previous
    }

    /// Whether new and existing keys are sealed.
    var encrypts: Bool { current != nil }

    /// Why a private key could not be opened or sealed (a configuration problem: start fails).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `raw` sealed under the current KEK, bound to `kid`: base64 of nonce ‖ ciphertext ‖ tag.
    func seal(_ raw: Data, kid: String) throws -> String {
        guard let current else { throw Failure(description: "no \(Self.variable) to seal signing keys with") }
        let box = try AES.GCM.seal(raw, using: current, authenticating: Data(kid.utf8))
        guard let combined = box.combined else { throw Failure(description: "AES-GCM gave no combined representation") }
        return combined.base64EncodedString()
    }

    /// The private key sealed as `sealed` for `kid`, and whether it took the previous KEK to
    /// open it (then it should be sealed again with the current one).
    func open(_ sealed: String, kid: String) throws -> (raw: Data, withPrevious: Bool) {
        guard let current else {
            throw Failure(description: """
                the token signing keys in accounts.signing_keys are encrypted: set \(Self.variable) \
                (or \(Self.variable)_FILE) to the key they were sealed with
                """)
        }
        guard let bytes = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: bytes) else {
            throw Failure(description: "the sealed private key of signing key \(kid) is malformed")
        }
        if let raw = try? AES.GCM.open(box, using: current, authenticating: Data(kid.utf8)) {
            return (raw, false)
        }
        if let previous, let raw = try? AES.GCM.open(box, using: previous, authenticating: Data(kid.utf8)) {
            return (raw, true)
        }
        let tried = previous == nil ? "it" : "it nor with \(Self.previousVariable)"
        throw Failure(description: """
            the signing keys were sealed with another \(Self.variable): signing key \(kid) does not open with \(tried). \
            Set the key they were sealed with (to change it, set the old one as \(Self.previousVariable) \
            and the new one as \(Self.variable))
            """)
    }
}
