import Crypto
import CryptoExtras
import Foundation
import NIOPosix

/// Slow salted password hashes (scrypt, RFC 7914) computed off the async executors.
///
/// Stored as `scrypt$<log2 N>$<r>$<p>$<salt base64>$<hash base64>`, so the cost can be raised
/// later without invalidating existing hashes.
struct PasswordHasher: Sendable {
    let logN: Int
    let r = 8
    let p = 1
    let pool: NIOThreadPool

    /// Hashes a new password with a fresh 16-byte salt.
    func hash(_ password: String) async throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        var rng = SystemRandomNumberGenerator()
        for k in 0..<16 { salt[k] = rng.next() }
        let (logN, r, p, saltBytes) = (self.logN, self.r, self.p, salt)
        let derived = try await pool.runIfActive {
            try Self.derive(password, salt: saltBytes, logN: logN, r: r, p: p)
        }
        return "scrypt$\(logN)$\(r)$\(p)$\(Data(salt).base64EncodedString())$\(Data(derived).base64EncodedString())"
    }

    /// Checks a password against a stored hash in constant time.
    func verify(_ password: String, against stored: String) async throws -> Bool {
        let parts = stored.split(separator: "$")
        guard parts.count == 6, parts[0] == "scrypt", let logN = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
              let salt = Data(base64Encoded: String(parts[4])), let expected = Data(base64Encoded: String(parts[5])),
              (1...20).contains(logN)
        else { return false }
        let derived = try await pool.runIfActive {
            try Self.derive(password, salt: [UInt8](salt), logN: logN, r: r, p: p)
        }
        guard derived.count == expected.count else { return false }
        var diff: UInt8 = 0
        for (a, b) in zip(derived, expected) { diff |= a ^ b }
        return diff == 0
    }

    /// Burns the same time as a real check (for unknown emails, so timing does not tell).
    func dummyVerify(_ password: String) async throws {
        _ = try await verify(password, against: "scrypt$\(logN)$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    }

    static func derive(_ password: String, salt: [UInt8], logN: Int, r: Int, p: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(from: Array(password.utf8), salt: salt, outputByteCount: 32,
                                           rounds: 1 << logN, blockSize: r, parallelism: p)
        return key.withUnsafeBytes { Array($0) }
    }
}
