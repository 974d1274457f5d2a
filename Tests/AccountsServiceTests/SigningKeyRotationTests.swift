@testable import AccountsService
import Contracts
import Crypto
import Foundation
import Messaging
import Persistence
import PostgresNIO
import ServiceKit
import Support
@testable import SuiteSupport
import Synchronization
import Testing

/// Rotating the access-token signing key (`accounts.rotate-signing-key`, `chronirctl keys
/// rotate-jwt`) while requests flow, the replaced key's retirement, and the keys' encryption at
/// rest under `CHRONIR_KEY_ENCRYPTION_KEY`.
@Suite("Signing key rotation", .serialized)
struct SigningKeyRotationTests {
    /// A key-encryption key: 32 random bytes, base64.
    static func newKEK() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
    }

    /// The `kid` in a JWT's header.
    static func kid(of token: String) -> String? {
        guard let header = token.split(separator: ".").first else { return nil }
        var text = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return json["kid"] as? String
    }

    /// One row of `accounts.signing_keys`.
    struct KeyRow: Sendable {
        var kid: String
        var clear: String?
        var sealed: String?
        var publicKey: String?
        var retireAfter: Date?
        var retiredAt: Date?
    }

    static func keyRows(_ s: TestSuite) async throws -> [KeyRow] {
        try await s.inDatabase("accounts") { db in
            let rows = try await db.query("""
                SELECT kid, private_key, private_key_sealed, public_key, retire_after, retired_at FROM signing_keys ORDER BY created_at, kid
                """)
            var out: [KeyRow] = []
            for try await (kid, clear, sealed, publicKey, retireAfter, retiredAt) in rows.decode((String, String?, String?, String?, Date?, Date?).self) {
                out.append(KeyRow(kid: kid, clear: clear, sealed: sealed, publicKey: publicKey, retireAfter: retireAfter, retiredAt: retiredAt))
            }
            return out
        }
    }

    static func rotate(_ s: TestSuite) async throws -> AccountsMethods.RotateSigningKey.Response {
        try await s.rpc(.accounts, AccountsMethods.RotateSigningKey.self, Empty())
    }

    static func publishedKids(_ s: TestSuite) async throws -> Set<String> {
        let published = try await s.rpc(.accounts, AccountsMethods.Keys.self, Empty())
        return Set(published.keys.map(\.kid))
    }

    static func login(_ s: TestSuite, _ user: TestUser) async throws -> String {
        let r = try await s.request(.POST, "/v1/auth/login", json: ["email": user.email, "password": "correct horse"])
        guard r.status == 200, let token = r.json["accessToken"]?.stringValue else { throw TestSetupError("login failed: \(r.status) \(r.text)") }
        return token
    }

    /// What the request loop saw.
    final class RequestLoop: Sendable {
        /// The tokens the loop takes turns with.
        let tokens: Mutex<[String]>
        let failures = Mutex<[String]>([])
        let sent = Mutex(0)
        let stopped = Mutex(false)

        init(token: String) { tokens = Mutex([token]) }

        /// `workers` tasks sending `GET /v1/me` in a loop, each time with the next token, until stopped.
        func run(_ s: TestSuite, workers: Int) async {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        var turn = worker
                        while !self.stopped.withLock({ $0 }) {
                            let all = self.tokens.withLock { $0 }
                            let token = all[turn % all.count]
                            turn += 1
                            do {
                                let r = try await s.request(.GET, "/v1/me", token: token)
                                if r.status != 200 {
                                    let kid = SigningKeyRotationTests.kid(of: token) ?? "-"
                                    self.failures.withLock { $0.append("\(r.status) \(r.text) (kid \(kid))") }
                                }
                            } catch {
                                self.failures.withLock { $0.append("\(error)") }
                            }
                            self.sent.withLock { $0 += 1 }
                        }
                    }
                }
            }
        }
    }

    @Test("rotating while requests flow loses none: new tokens carry the new kid, old tokens are still accepted, both keys are published")
    func rotateUnderLoad() async throws {
        let kek = Self.newKEK()
        try await withTestSuite(label: "key-rotation", start: { s in
            try s.startAccountsAndGateway(accounts: ["CHRONIR_KEY_ENCRYPTION_KEY": kek])
        }) { s in
            let user = try await s.signup("Rotor", verified: false)
            let oldKid = try #require(Self.kid(of: user.token))
            #expect(try await Self.publishedKids(s) == [oldKid])

            let loop = RequestLoop(token: user.token)
            let running = Task { await loop.run(s, workers: 4) }
            defer { loop.stopped.withLock { $0 = true } }
            try await Task.sleep(for: .milliseconds(300))

            let rotation = try await Self.rotate(s)
            #expect(rotation.previousKid == oldKid)
            #expect(rotation.kid != oldKid)
            // The replaced key is published for the access-token lifetime (1 h) and a minute.
            let retiresIn = try #require(rotation.previousRetiresAt).timeIntervalSinceNow
            #expect(retiresIn > 3600 && retiresIn < 3700, "\(retiresIn)")
            #expect(try await Self.publishedKids(s) == [oldKid, rotation.kid])

            // A new sign-in is signed with the new key. The loop's four workers use it at once,
            // old and new tokens in turn: the first uses make the gateway fetch the keys (an
            // unknown kid), and the others wait for that one fetch instead of being refused.
            let newToken = try await Self.login(s, user)
            #expect(Self.kid(of: newToken) == rotation.kid)
            loop.tokens.withLock { $0.append(newToken) }
            let first = try await s.request(.GET, "/v1/me", token: newToken)
            #expect(first.status == 200, "\(first.text)")
            try await Task.sleep(for: .seconds(1))
            loop.stopped.withLock { $0 = true }
            await running.value

            let failures = loop.failures.withLock { $0 }
            let sent = loop.sent.withLock { $0 }
            #expect(failures.isEmpty, "\(failures.count) of \(sent) requests failed: \(failures.prefix(5))")
            #expect(sent > 20, "only \(sent) requests were sent")
            print("key rotation: \(sent) requests with old and new tokens during the rotation, \(failures.count) refused")
            // The old token is still accepted, and a refreshed token carries the new kid.
            #expect(try await s.request(.GET, "/v1/me", token: user.token).status == 200)
            let refreshToken = try #require(user.refreshToken)
            let refresh = try await s.request(.POST, "/v1/auth/refresh", json: ["refreshToken": refreshToken])
            #expect(refresh.status == 200, "\(refresh.text)")
            let refreshed: String? = refresh.json["accessToken"]?.stringValue
            #expect(refreshed.flatMap { Self.kid(of: $0) } == rotation.kid)

            // The new key is sealed too: nothing in the clear.
            let rows = try await Self.keyRows(s)
            #expect(rows.count == 2)
            #expect(rows.allSatisfy { $0.clear == nil && $0.sealed != nil }, "\(rows)")

            // Only the operator may rotate: the gateway's key is refused.
            let context = try TestBusKeys.context("gateway")
            let accounts = try RPCClient(context: context, target: "accounts", endpoints: ["tcp://127.0.0.1:\(s.ports[.accounts]!.rpc)"],
                                         source: "tests/1", telemetry: .discarding())
            var refusal: ServiceError? = nil
            do {
                _ = try await accounts.call(AccountsMethods.RotateSigningKey.self, Empty(), timeout: .seconds(10))
            } catch let error as ServiceError {
                refusal = error
            } catch {
                Issue.record(error)
            }
            await accounts.close()
            context.terminate()
            #expect(refusal?.code == .callerNotAllowed, "\(String(describing: refusal))")
            #expect(try await Self.publishedKids(s) == [oldKid, rotation.kid])
        }
    }

    @Test("two rotations at once leave one active key; replaced keys retire once the token lifetime passed, are no longer published, and lose their private key")
    func retirement() async throws {
        try await withTestSuite(label: "key-retirement", start: { s in
            try s.startAccountsAndGateway(
                accounts: ["CHRONIR_ACCESS_TTL": "5s", "CHRONIR_SIGNING_KEY_RETIRE_MARGIN": "1s",
                           "CHRONIR_SIGNING_KEY_SWEEP": "200ms", "CHRONIR_SIGNING_KEY_RELOAD": "200ms"],
                gateway: ["CHRONIR_ACCESS_TTL": "5s"])
        }) { s in
            let user = try await s.signup("Retiree", verified: false)
            let first = try #require(Self.kid(of: user.token))

            async let a = Self.rotate(s)
            async let b = Self.rotate(s)
            let (ra, rb) = try await (a, b)
            // One replaced the first key, the other the key the first rotation made.
            let (earlier, later) = ra.previousKid == first ? (ra, rb) : (rb, ra)
            #expect(earlier.previousKid == first)
            #expect(later.previousKid == earlier.kid)
            let active = try await Self.keyRows(s).filter { $0.retiredAt == nil && $0.retireAfter == nil }
            #expect(active.map(\.kid) == [later.kid])
            #expect(try await Self.publishedKids(s) == [first, earlier.kid, later.kid])
            // The old token still passes while it lives.
            #expect(try await s.request(.GET, "/v1/me", token: user.token).status == 200)

            // 5 s of token lifetime and 1 s of margin later, the retire step retires both.
            let retired = await eventually(timeout: .seconds(20), every: .milliseconds(200)) {
                let rows = (try? await Self.keyRows(s)) ?? []
                return rows.filter { $0.retiredAt != nil }.map(\.kid).sorted() == [first, earlier.kid].sorted()
            }
            let rows = try await Self.keyRows(s)
            #expect(retired, "\(rows)")
            #expect(try await Self.publishedKids(s) == [later.kid])
            let retiredRows = rows.filter { $0.retiredAt != nil }
            #expect(retiredRows.allSatisfy { $0.clear == nil && $0.sealed == nil && $0.publicKey != nil }, "\(rows)")
            let remaining = rows.first(where: { $0.kid == later.kid })
            #expect(remaining?.clear != nil, "no key-encryption key: stored as it is")

            // Sign-in goes on with the remaining key.
            let token = try await Self.login(s, user)
            #expect(Self.kid(of: token) == later.kid)
            #expect(try await s.request(.GET, "/v1/me", token: token).status == 200)
        }
    }

    /// How a start of accounts on the suite's database (not one of the suite's services) ended.
    enum StartOutcome: Sendable {
        case failed(String)
        case stopped
        case stillRunning
    }

    /// Starts accounts with `extra` and waits up to 30 s for it to stop; one still running then is stopped.
    static func startAlone(_ s: TestSuite, _ extra: [String: String]) async throws -> StartOutcome {
        let service = try RunningService(name: "accounts", environment: s.environment(for: "accounts", extra: extra),
                                         migrations: AccountsService.migrations, build: AccountsService.build)
        let task = service.task
        let handle = service.handle
        return await withTaskGroup(of: StartOutcome.self) { group in
            group.addTask {
                do {
                    try await task.value
                    return .stopped
                } catch {
                    return .failed("\(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return .stillRunning
            }
            let first = await group.next() ?? .stillRunning
            if case .stillRunning = first { await handle.shutdown() }
            group.cancelAll()
            return first
        }
    }

    static func failure(_ outcome: StartOutcome) -> String {
        if case .failed(let message) = outcome { return message }
        return "\(outcome)"
    }

    @Test("with a key-encryption key no private key is stored in the clear: a key from before is sealed at start and keeps signing; the KEK can be changed; a wrong or missing one stops the start")
    func encryptionAtRest() async throws {
        let kek = Self.newKEK()
        let legacy = Curve25519.Signing.PrivateKey()
        let legacyKid = "k-legacy01"
        let legacyClear = legacy.rawRepresentation.base64EncodedString()
        try await withTestSuite(label: "key-at-rest", migrated: false, start: { _ in }) { s in
            // The schema as the release before left it, its key stored in the clear.
            try await s.inDatabase("accounts") { db in
                try await Migrator(database: db).migrate(AccountsService.migrations.filter { $0.version <= 6 })
                try await db.query("INSERT INTO signing_keys (kid, private_key) VALUES (\(legacyKid), \(legacyClear))").drain()
            }
            try s.startAccountsAndGateway(accounts: ["CHRONIR_KEY_ENCRYPTION_KEY": kek])
            let user = try await s.signup("Sealed", verified: false)
            // The key from before is still the one in use: tokens it signed stay valid.
            #expect(Self.kid(of: user.token) == legacyKid)

            let rows = try await Self.keyRows(s)
            #expect(rows.map(\.kid) == [legacyKid])
            let row = try #require(rows.first)
            #expect(row.clear == nil)
            let sealed = try #require(row.sealed)
            #expect(!sealed.contains(legacyClear) && !sealed.contains(legacy.rawRepresentation.base64URLEncodedString()))
            #expect(row.publicKey == legacy.publicKey.rawRepresentation.base64URLEncodedString())
            // AES-GCM under the KEK, bound to the kid.
            let box = try AES.GCM.SealedBox(combined: try #require(Data(base64Encoded: sealed)))
            let key = SymmetricKey(data: try #require(Data(base64Encoded: kek)))
            #expect(try AES.GCM.open(box, using: key, authenticating: Data(legacyKid.utf8)) == legacy.rawRepresentation)
            #expect(throws: (any Error).self) { try AES.GCM.open(box, using: key, authenticating: Data("k-other".utf8)) }

            // A rotation seals the new key as well.
            let rotation = try await Self.rotate(s)
            #expect(rotation.previousKid == legacyKid)
            let rotated = try await Self.keyRows(s)
            #expect(rotated.count == 2 && rotated.allSatisfy { $0.clear == nil && $0.sealed != nil }, "\(rotated)")

            // A wrong key-encryption key, none, or a malformed one: accounts refuses to start.
            let wrong = try await Self.failure(Self.startAlone(s, ["CHRONIR_KEY_ENCRYPTION_KEY": Self.newKEK()]))
            #expect(wrong.contains("the signing keys were sealed with another CHRONIR_KEY_ENCRYPTION_KEY"), "\(wrong)")
            let missing = try await Self.failure(Self.startAlone(s, [:]))
            #expect(missing.contains("set CHRONIR_KEY_ENCRYPTION_KEY"), "\(missing)")
            let malformed = try await Self.failure(Self.startAlone(s, ["CHRONIR_KEY_ENCRYPTION_KEY": "not-a-key"]))
            #expect(malformed.contains("CHRONIR_KEY_ENCRYPTION_KEY must be 32 random bytes in base64"), "\(malformed)")

            // Changing the KEK: restarted with the new one (from a file) and the old one as
            // CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS, accounts seals every key again with the new one.
            let newKEK = Self.newKEK()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("chronir-kek-\(UUID().uuidString)")
            try Data("\(newKEK)\n".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let accounts = try #require(s.running.withLock { services in services.first(where: { $0.name == "accounts" }) })
            await accounts.stop()
            try s.start("accounts", migrations: AccountsService.migrations,
                        extra: ["CHRONIR_KEY_ENCRYPTION_KEY_FILE": file.path, "CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS": kek],
                        build: AccountsService.build)
            let resealed = await eventually(timeout: .seconds(20)) {
                let rows = (try? await Self.keyRows(s)) ?? []
                return rows.count == 2 && rows.allSatisfy { row in
                    guard let sealed = row.sealed, let bytes = Data(base64Encoded: sealed),
                          let box = try? AES.GCM.SealedBox(combined: bytes) else { return false }
                    return (try? AES.GCM.open(box, using: SymmetricKey(data: Data(base64Encoded: newKEK)!), authenticating: Data(row.kid.utf8))) != nil
                }
            }
            let resealedRows = try await Self.keyRows(s)
            #expect(resealed, "\(resealedRows)")
            // Tokens from before the restart, of either key, still pass; sign-in uses the new key.
            #expect(await eventually(timeout: .seconds(20)) { (try? await s.request(.GET, "/v1/me", token: user.token))?.status == 200 })
            let token = try await Self.login(s, user)
            #expect(Self.kid(of: token) == rotation.kid)
            #expect(try await s.request(.GET, "/v1/me", token: token).status == 200)
            // The old KEK alone no longer opens them.
            let old = try await Self.failure(Self.startAlone(s, ["CHRONIR_KEY_ENCRYPTION_KEY": kek]))
            #expect(old.contains("the signing keys were sealed with another CHRONIR_KEY_ENCRYPTION_KEY"), "\(old)")
        }
    }

    @Test("the key-encryption key is read from the variable or from the file _FILE names; both, or a bad value, is a configuration error")
    func keyEncryptionKeyConfiguration() throws {
        let kek = Self.newKEK()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chronir-kek-\(UUID().uuidString)")
        try Data("\(kek)\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let direct = try AccountsConfig(environment: ServiceEnvironment(["CHRONIR_KEY_ENCRYPTION_KEY": kek])).keySealing
        let fromFile = try AccountsConfig(environment: ServiceEnvironment(["CHRONIR_KEY_ENCRYPTION_KEY_FILE": file.path])).keySealing
        let raw = Data((0..<32).map { UInt8($0) })
        let sealed = try direct.seal(raw, kid: "k-1")
        #expect(try fromFile.open(sealed, kid: "k-1").raw == raw)
        #expect(throws: KeySealing.Failure.self) { try fromFile.open(sealed, kid: "k-2") }
        let none = try AccountsConfig(environment: ServiceEnvironment([:])).keySealing
        #expect(!none.encrypts)

        #expect(throws: ServiceEnvironment.Invalid.self) {
            try AccountsConfig(environment: ServiceEnvironment(["CHRONIR_KEY_ENCRYPTION_KEY": kek, "CHRONIR_KEY_ENCRYPTION_KEY_FILE": file.path])).keySealing
        }
        #expect(throws: ServiceEnvironment.Invalid.self) {
            try AccountsConfig(environment: ServiceEnvironment(["CHRONIR_KEY_ENCRYPTION_KEY": Data(count: 16).base64EncodedString()])).keySealing
        }
        #expect(throws: ServiceEnvironment.Invalid.self) {
            try AccountsConfig(environment: ServiceEnvironment(["CHRONIR_KEY_ENCRYPTION_KEY_FILE": "/nonexistent/kek"])).keySealing
        }
        #expect(throws: ServiceEnvironment.Invalid.self) {
            try AccountsConfig(environment: ServiceEnvironment(["CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS": kek])).keySealing
        }
        // Sealed with the previous key: opened, and marked for sealing again.
        let rotating = try AccountsConfig(environment: ServiceEnvironment(["CHRONIR_KEY_ENCRYPTION_KEY": Self.newKEK(), "CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS": kek])).keySealing
        let opened = try rotating.open(sealed, kid: "k-1")
        #expect(opened.raw == raw && opened.withPrevious)
    }
}
