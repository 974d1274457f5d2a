import Crypto
import CryptoExtras
import Foundation
import Messaging
import NIOPosix
import Synchronization
import Wire

/// Slow salted password hashes (scrypt, RFC 7914) computed off the async executors.
///
/// Stored as `scrypt$<log2 N>$<r>$<p>$<salt base64>$<hash base64>`, so the cost can be raised
/// later without invalidating existing hashes.
///
/// At most `queue.limit` hashes wait or run at once (`CHRONIR_HASH_QUEUE`); one more is refused
/// at once with `CA022` (503 with `Retry-After`) instead of waiting behind a flood, so a burst
/// costs its senders an answer, not everyone's sign-in a stall.
struct PasswordHasher: Sendable {
    let logN: Int
    let r = 8
    let p = 1
    let pool: NIOThreadPool
    let queue: HashQueue

    init(logN: Int, pool: NIOThreadPool, queueLimit: Int = 64) {
        self.logN = logN
        self.pool = pool
        self.queue = HashQueue(limit: queueLimit)
    }

    /// Hashes a new password with a fresh 16-byte salt.
    func hash(_ password: String) async throws -> String {
        let salt = [UInt8](Data.secureRandom(count: 16))
        let (logN, r, p, saltBytes) = (self.logN, self.r, self.p, salt)
        let derived = try await queue.run(pool) {
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
        let derived = try await queue.run(pool) {
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

/// The bound on hashes waiting for or running on the hashing threads.
struct HashQueue: Sendable {
    let slots: BoundedSlots

    init(limit: Int) { slots = BoundedSlots(limit: limit, refusal: "password checks are busy; try again in a moment") }

    /// The most hashes queued or running at once.
    var limit: Int { slots.limit }
    /// The hashes queued or running now.
    var depth: Int { slots.depth }

    /// Runs `work` on `pool` when fewer than `limit` hashes are queued or running; otherwise
    /// throws `CA022` with `retryAfterSeconds` 1 without queueing it. A hash whose caller's
    /// deadline (``RequestDeadline``) has passed by the time a thread takes it up is not
    /// computed: it throws `deadlineExceeded`, and the thread goes to the next one (a burst of
    /// sign-ups behind two hashing threads otherwise spends them on answers nobody waits for).
    func run<T: Sendable>(_ pool: NIOThreadPool, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let deadline = RequestDeadline.current
        return try await slots.run {
            try await pool.runIfActive {
                if let deadline, ContinuousClock.now >= deadline {
                    throw ServiceError(.deadlineExceeded, "the caller stopped waiting before its password was checked")
                }
                return try work()
            }
        }
    }
}
