import CZMQ
import Foundation

/// A CurveZMQ long-term key pair, kept as Z85 text (40 characters each, as libzmq and
/// czmq's `zcert` write them).
public struct CurveKeyPair: Sendable, Equatable {
    /// The public key, Z85.
    public let publicKey: String
    /// The secret key, Z85.
    public let secretKey: String

    /// A new random key pair (libzmq's `zmq_curve_keypair`, backed by libsodium).
    public static func generate() throws -> CurveKeyPair {
        var pub = [CChar](repeating: 0, count: 41)
        var sec = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&pub, &sec) == 0 else { throw ZMQError.current("zmq_curve_keypair") }
        return CurveKeyPair(publicKey: String(cString: pub), secretKey: String(cString: sec))
    }

    /// The pair of a secret key (its public key derived with `zmq_curve_public`).
    public init(secretKey: String) throws {
        let secret = secretKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard CurveKey.decode(secret) != nil else { throw CurveKey.Invalid("not a Z85 CURVE secret key (40 characters)") }
        var pub = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&pub, secret) == 0 else { throw ZMQError.current("zmq_curve_public") }
        self.publicKey = String(cString: pub)
        self.secretKey = secret
    }

    init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

/// Z85 ↔ binary for 32-byte CURVE keys.
public enum CurveKey {
    /// A key that is not 40 characters of Z85.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The 32 bytes of a Z85 key, or nil when it is not one.
    public static func decode(_ z85: String) -> Data? {
        let text = z85.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count == 40 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        guard zmq_z85_decode(&bytes, text) != nil else { return nil }
        return Data(bytes)
    }

    /// The Z85 text of 32 key bytes.
    public static func encode(_ key: Data) -> String? {
        guard key.count == 32 else { return nil }
        var text = [CChar](repeating: 0, count: 41)
        let ok = key.withUnsafeBytes { raw in
            zmq_z85_encode(&text, raw.bindMemory(to: UInt8.self).baseAddress, 32) != nil
        }
        return ok ? String(cString: text) : nil
    }

    /// Whether this libzmq was built with CURVE (libsodium).
    public static var isSupported: Bool { zmq_has("curve") != 0 }
}
