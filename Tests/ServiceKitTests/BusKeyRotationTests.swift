import AccountsService
import AlarmsService
import Contracts
import Logging
import ServiceKit
import Foundation
import Messaging
import Support
@testable import SuiteSupport
import Synchronization
import Testing
import ZMQ

/// Rotating a principal's bus key without restarting the services that trust it: a public key
/// file lists the current key first and keys still accepted after it; SIGHUP or
/// `system.reload-bus-keys` makes a service read the files again. Shown with the operator's key
/// (a principal that only connects) while requests flow.
@Suite("Bus key rotation", .serialized)
struct BusKeyRotationTests {
    /// A copy of the test keys the services of one test read (and the test rewrites).
    static func copyOfTestKeys() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("chronir-rotate-\(UUID().uuidString)").path
        try FileManager.default.copyItem(atPath: TestBusKeys.directory, toPath: dir)
        return dir
    }

    /// A client of accounts with `pair`, reaching accounts by `accountsKey` (default: the first
    /// key its public key file lists).
    static func client(_ pair: CurveKeyPair, keys dir: String, port: Int, accountsKey: String? = nil) throws -> (RPCClient, ZMQContext) {
        let accounts = try accountsKey ?? String(contentsOfFile: KeyFile.publicPath(dir, "accounts"), encoding: .utf8)
            .split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let security = try BusSecurity(principal: BusPolicy.operatorPrincipal, keys: pair, publicKeys: ["accounts": accounts])
        let context = try ZMQContext(security: security)
        let client = try RPCClient(context: context, target: "accounts", endpoints: ["tcp://127.0.0.1:\(port)"],
                                   source: "operator/test", telemetry: .discarding())
        return (client, context)
    }

    /// Whether a fresh connection with `pair` (to accounts by `accountsKey`) gets an answer (a
    /// refused key gets none).
    static func accepted(_ pair: CurveKeyPair, keys dir: String, port: Int, accountsKey: String? = nil) async throws -> Bool {
        let (client, context) = try client(pair, keys: dir, port: port, accountsKey: accountsKey)
        defer { context.terminate() }
        let ok = (try? await client.call(SystemMethods.Streams.self, Empty(), timeout: .milliseconds(1500))) != nil
        await client.close()
        return ok
    }

    @Test("the operator's key is rotated while requests flow: the new key is accepted after a reload, the old one refused after the next, no request lost")
    func rotateOperatorKey() async throws {
        let dir = try Self.copyOfTestKeys()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await withTestSuite(label: "buskeys", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: ["CHRONIR_BUS_KEYS": dir], build: AccountsService.build)
        }) { s in
            let port = s.ports[.accounts]!.rpc
            let old = try CurveKeyPair(secretKey: try String(contentsOfFile: KeyFile.secretPath(dir, "operator"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines))
            let new = try CurveKeyPair.generate()
            #expect(try await Self.accepted(old, keys: dir, port: port))
            #expect(try await !Self.accepted(new, keys: dir, port: port), "a key nobody listed is refused")

            // Requests with the old key flow the whole time.
            let (flowing, flowContext) = try Self.client(old, keys: dir, port: port)
            let sent = Mutex(0), failed = Mutex<[String]>([]), stop = Mutex(false)
            let loop = Task {
                while !stop.withLock({ $0 }) {
                    do { _ = try await flowing.call(SystemMethods.Streams.self, Empty(), timeout: .seconds(5)) } catch {
                        failed.withLock { $0.append("\(error)") }
                    }
                    sent.withLock { $0 += 1 }
                }
            }

            // 1. The new key is listed after the old one; a reload makes accounts accept both.
            let pub = KeyFile.publicPath(dir, "operator")
            try "\(old.publicKey)\n\(new.publicKey)\n".write(toFile: pub, atomically: true, encoding: .utf8)
            let reloaded = try await flowing.call(SystemMethods.ReloadBusKeys.self, Empty())
            #expect(reloaded.trusted.contains("keys"))
            #expect(try await Self.accepted(new, keys: dir, port: port), "the new key after the first reload")
            #expect(try await Self.accepted(old, keys: dir, port: port), "the old key still, until it is removed")

            // 2. The operator uses the new key; the old one is removed, and a reload (asked with
            //    the new key) refuses it from the next connection on.
            let (rotated, rotatedContext) = try Self.client(new, keys: dir, port: port)
            try "\(new.publicKey)\n".write(toFile: pub, atomically: true, encoding: .utf8)
            _ = try await rotated.call(SystemMethods.ReloadBusKeys.self, Empty())
            #expect(try await !Self.accepted(old, keys: dir, port: port), "the old key after the second reload")
            #expect(try await Self.accepted(new, keys: dir, port: port))

            stop.withLock { $0 = true }
            await loop.value
            let (n, failures) = (sent.withLock { $0 }, failed.withLock { $0 })
            #expect(failures.isEmpty, "\(failures.count) of \(n) failed: \(failures.prefix(3))")
            #expect(n > 10)
            print("bus key rotation: \(n) requests on a connection made with the old key, \(failures.count) failed; new key accepted after reload 1, old refused after reload 2")
            await flowing.close(); flowContext.terminate()
            await rotated.close(); rotatedContext.terminate()
        }
    }

    /// A client pinned to `serverKey` for accounts gets an answer.
    static func reaches(accountsKey serverKey: String, keys dir: String, port: Int) async throws -> Bool {
        let own = try CurveKeyPair(secretKey: try String(contentsOfFile: KeyFile.secretPath(dir, "operator"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines))
        return try await accepted(own, keys: dir, port: port, accountsKey: serverKey)
    }

    @Test("a service's own key is rotated while requests flow: it binds again with its new key, its callers reconnect with it, no request lost")
    func rotateServiceKey() async throws {
        let dir = try Self.copyOfTestKeys()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await withTestSuite(label: "svckey", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: ["CHRONIR_BUS_KEYS": dir], build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, extra: ["CHRONIR_BUS_KEYS": dir], build: AlarmsService.build)
        }) { s in
            let port = s.ports[.accounts]!.rpc
            // The operator as a long-running caller: its own context, reloaded as a service's is.
            let environment = ServiceEnvironment(s.environment(for: "operator", extra: ["CHRONIR_BUS_KEYS": dir]))
            let logger = Logger(label: "rotate-test", factory: { _ in SwiftLogNoOpLogHandler() })
            let context = try BusKeys.context(principal: BusPolicy.operatorPrincipal, environment: environment, logger: logger, ioThreads: 1)
            let client = try RPCClient(context: context, target: "accounts", endpoints: ["tcp://127.0.0.1:\(port)"],
                                       source: "operator/test", telemetry: .discarding())
            _ = try await client.call(AccountsMethods.Anonymous.self, .init(), timeout: .seconds(10))
            #expect(await eventually(timeout: .seconds(20)) { await s.unsettled().isEmpty }, "alarms applies accounts' events before the rotation")

            // Requests flow the whole time, each under its own idempotency key (a request caught
            // on a connection being rebuilt is sent again, and answered once).
            let sent = Mutex(0), failed = Mutex<[String]>([]), stop = Mutex(false), slowest = Mutex(Duration.zero)
            let clock = ContinuousClock()
            let loop = Task {
                while !stop.withLock({ $0 }) {
                    let started = clock.now
                    do {
                        _ = try await client.call(SystemMethods.Streams.self, Empty(), timeout: .milliseconds(300),
                                                  idempotencyKey: UUID().uuidString, retries: 15)
                    } catch {
                        failed.withLock { $0.append("\(error)") }
                    }
                    let took = started.duration(to: clock.now)
                    slowest.withLock { $0 = max($0, took) }
                    sent.withLock { $0 += 1 }
                }
            }
            try await Task.sleep(for: .milliseconds(300))

            // 1. A new key pair for accounts, listed first; the old key after it.
            let oldKey = try String(contentsOfFile: KeyFile.publicPath(dir, "accounts"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let newKey = try KeyFile.rotate(in: dir, principal: "accounts")
            // 2. The reload `chronirctl keys reload` does: accounts first (it answers on its old
            //    key, then binds with the new one), its callers after it; then this caller.
            let outcomes = try await BusKeyReload.run(environment: environment, services: [.accounts, .alarms], timeout: .seconds(3))
            #expect(outcomes.map(\.target) == ["accounts", "alarms"])
            #expect(outcomes.allSatisfy { $0.reloaded }, "\(outcomes.map(\.detail))")
            try BusKeys.reload(principal: BusPolicy.operatorPrincipal, environment: environment, context: context, logger: logger)
            #expect(await eventually(timeout: .seconds(5)) { (try? await Self.reaches(accountsKey: newKey, keys: dir, port: port)) == true },
                    "accounts serves with its new key")
            #expect(try await !Self.reaches(accountsKey: oldKey, keys: dir, port: port), "and no longer with the old one")

            // Alarms reaches accounts' event stream again, with the new key.
            _ = try await client.call(AccountsMethods.Anonymous.self, .init(), timeout: .seconds(10))
            let settled = await eventually(timeout: .seconds(20)) { await s.unsettled().isEmpty }
            let left = await s.unsettled()
            #expect(settled, "alarms applies accounts' events after the rotation: \(left)")

            // 3. The old key is dropped from the file; a reload changes no connection.
            #expect(try KeyFile.finishRotation(in: dir, principal: "accounts") == [oldKey])
            let again = try await BusKeyReload.run(environment: environment, services: [.accounts, .alarms], timeout: .seconds(3))
            #expect(again.allSatisfy { $0.reloaded }, "\(again.map(\.detail))")
            try await Task.sleep(for: .milliseconds(300))

            stop.withLock { $0 = true }
            await loop.value
            let (n, failures, worst) = (sent.withLock { $0 }, failed.withLock { $0 }, slowest.withLock { $0 })
            #expect(failures.isEmpty, "\(failures.count) of \(n) failed: \(failures.prefix(3))")
            #expect(n > 10)
            print("service key rotation: \(n) requests to accounts while its key rotated, \(failures.count) failed, slowest \(worst)")
            await client.close()
            context.terminate()
        }
    }

    @Test("SIGHUP makes a running process read its bus keys again (and a broken key file leaves the keys in use)")
    func sighupReloads() async throws {
        let dir = try Self.copyOfTestKeys()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let url = try await TestDatabase.create("buskeys")
        let peer = try TestProcess("chronir-testpeer", ["consume"], environment: [
            "DATABASE_URL": url, "CHRONIR_BUS_KEYS": dir, "PEER_RPC": "tcp://127.0.0.1:\(freePort())",
            "PEER_EVENTS": "tcp://127.0.0.1:\(freePort())"], label: "sighup")
        #expect(await peer.waitForOutput("consumer ready"))
        let extra = try CurveKeyPair.generate()
        try "\(try String(contentsOfFile: KeyFile.publicPath(dir, "operator"), encoding: .utf8))\(extra.publicKey)\n"
            .write(toFile: KeyFile.publicPath(dir, "operator"), atomically: true, encoding: .utf8)
        peer.signal(SIGHUP)
        #expect(await peer.waitForOutput("bus keys reloaded"), "\(peer.output.suffix(1000))")
        try "not a key\n".write(toFile: KeyFile.publicPath(dir, "gateway"), atomically: true, encoding: .utf8)
        peer.signal(SIGHUP)
        #expect(await peer.waitForOutput("reloading the bus keys failed; the keys in use stay"), "\(peer.output.suffix(1000))")
        #expect(await peer.terminate() == 0, "still running after both signals")
    }
}
