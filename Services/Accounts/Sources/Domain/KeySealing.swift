import Crypto
import Foundation
import ServiceKit

/// Encryption at rest of the token-signing keys: each private key is stored as an AES-256-GCM
/// sealed box (nonce, ciphertext and tag, base64) with its kid as authenticated data, under
/// the key-encryption key (KEK) of the environment:
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

    /// The KEKs of `env`; a variable that is set but malformed (or set both directly and as a
    /// file) is a configuration error naming it.
    static func from(_ env: ServiceEnvironment) throws -> KeySealing {
        let current = try kek(env, variable)
        let previous = try kek(env, previousVariable)
        if previous != nil && current == nil {
            throw ServiceEnvironment.Invalid("\(previousVariable) is set without \(variable): set the new key in \(variable)")
        }
        return KeySealing(current: current, previous: previous)
    }

    /// The value of `name`, or the content of the file `name_FILE` names (trimmed); nil when
    /// neither is set.
    static func secret(_ env: ServiceEnvironment, _ name: String) throws -> String? {
        let direct = env.optional(name)
        let file = env.optional("\(name)_FILE")
        switch (direct, file) {
        case (nil, nil):
            return nil
        case (.some, .some):
            throw ServiceEnvironment.Invalid("set \(name) or \(name)_FILE, not both")
        case (.some(let value), nil):
            return value.trimmingCharacters(in: .whitespacesAndNewlines)
        case (nil, .some(let path)):
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ServiceEnvironment.Invalid("\(name)_FILE=\"\(path)\" cannot be read: \(error.localizedDescription)")
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// A KEK: 32 bytes, base64.
    static func kek(_ env: ServiceEnvironment, _ name: String) throws -> SymmetricKey? {
        guard let text = try secret(env, name) else { return nil }
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
            throw ServiceEnvironment.Invalid("\(name) must be 32 random bytes in base64 (44 characters; `openssl rand -base64 32`)")
        }
        return SymmetricKey(data: bytes)
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
