import AccountsService
import AlarmsService
import Contracts
import Foundation
import GatewayService
import Messaging
import ServiceKit
import Support
import ZMQ
import Crypto

/// A signed-up user of a test suite.
struct TestUser: Sendable {
    let uid: String
    let token: String
    let email: String
    /// The refresh token of the sign-up (nil where a test made the user some other way).
    var refreshToken: String? = nil
}

extension TestSuite {
    /// Starts accounts, alarms and the gateway (alarm creation limited to `creationsPerMinute`;
    /// `gatewayExtra` added to the gateway's environment).
    func startCore(creationsPerMinute: Int = 1000, alarmsExtra: [String: String] = [:], gatewayExtra: [String: String] = [:]) throws {
        try start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
        try start("alarms", migrations: AlarmsService.migrations,
                  extra: alarmsExtra.merging(["CHRONIR_ALARM_CREATIONS_PER_MINUTE": String(creationsPerMinute)]) { $1 }, build: AlarmsService.build)
        try startGateway(extra: gatewayExtra)
    }

    /// Starts accounts (its environment adding `accounts`) and the gateway (adding `gateway`):
    /// the public edge and who stands behind sign-in.
    func startAccountsAndGateway(accounts: [String: String] = [:], gateway: [String: String] = [:]) throws {
        try start("accounts", migrations: AccountsService.migrations, extra: accounts, build: AccountsService.build)
        try startGateway(extra: gateway)
    }

    /// Starts the gateway (its port is known once it listens: ``gatewayURL()``).
    func startGateway(extra: [String: String] = [:]) throws {
        try start("gateway", extra: extra) { runtime, _ in
            try GatewayService.build(runtime: runtime, config: GatewayConfig(environment: runtime.environment)) { port in self.gatewayPort.withLock { $0 = port } }
        }
    }

    /// Signs a user up through the API. A `verified` user then proves the address the way a
    /// person does — answers a verification mail (`POST /v1/auth/verify-email`) — and signs in
    /// again, so their access token says so; only the mail's delivery is skipped (its token is
    /// written as the accounts service writes one). An unverified user holds an address they
    /// never proved (what an attacker can sign up with).
    func signup(_ name: String, email given: String? = nil, timezone: String = "UTC", verified: Bool = true) async throws -> TestUser {
        let email = given ?? "\(name.lowercased())-\(UInt32.random(in: 0...UInt32.max))@example.com"
        let r = try await request(.POST, "/v1/auth/signup", json: ["email": email, "password": "correct horse", "displayName": name, "timezone": timezone])
        guard r.status == 201, let token = r.json["accessToken"]?.stringValue, let uid = r.json["user"]?["uid"]?.stringValue else {
            throw TestSetupError("signup failed: \(r.status) \(r.text)")
        }
        let user = TestUser(uid: uid, token: token, email: email, refreshToken: r.json["refreshToken"]?.stringValue)
        return verified ? try await verifyEmail(user) : user
    }

    /// Proves `user`'s address through the API (a verification token answered) and signs in
    /// again: the returned user's access token carries `email_verified`.
    func verifyEmail(_ user: TestUser, password: String = "correct horse") async throws -> TestUser {
        let secret = "test-verify-\(UUID().uuidString)"
        let hash = SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
        try await inDatabase("accounts") {
            try await $0.query("""
                INSERT INTO email_tokens (token_hash, user_id, purpose, email, expires_at)
                VALUES (\(hash), \(user.uid), 'verify', \(user.email), now() + interval '1 hour')
                """).drain()
        }
        // The link confirms only inside the account it was sent for (issue 74).
        let confirmed = try await request(.POST, "/v1/auth/verify-email", token: user.token, json: ["token": secret])
        guard confirmed.status == 204 else { throw TestSetupError("verification failed: \(confirmed.status) \(confirmed.text)") }
        let login = try await request(.POST, "/v1/auth/login", json: ["email": user.email, "password": password])
        guard login.status == 200, let token = login.json["accessToken"]?.stringValue else {
            throw TestSetupError("login after verification failed: \(login.status) \(login.text)")
        }
        return TestUser(uid: user.uid, token: token, email: user.email, refreshToken: login.json["refreshToken"]?.stringValue)
    }

    /// Sends a request straight to a service over ZeroMQ (internal requests the gateway does not
    /// route), with the operator's key, or the gateway's when acting for a user.
    func rpc<M: RPCMethod>(_ service: ServiceDirectory.Name, _ method: M.Type, _ request: M.Request, actor: String? = nil) async throws -> M.Response {
        let context = try TestBusKeys.context(actor == nil ? BusPolicy.operatorPrincipal : "gateway")
        let client = try RPCClient(context: context, target: service.rawValue, endpoints: ["tcp://127.0.0.1:\(ports[service]!.rpc)"],
                                   source: "tests/1", telemetry: .discarding())
        do {
            let response = try await client.call(method, request, actor: actor, timeout: .seconds(10))
            await client.close()
            context.terminate()
            return response
        } catch {
            await client.close()
            context.terminate()
            throw error
        }
    }

    /// Sets a user's tier through the alarms service's internal request.
    @discardableResult
    func setTier(_ user: TestUser, _ tier: String) async throws -> AlarmsMethods.SetTier.Response {
        _ = try await rpc(.accounts, AccountsMethods.SetTier.self, .init(userId: user.uid, tier: Tier(rawValue: tier) ?? .free))
        return try await rpc(.alarms, AlarmsMethods.SetTier.self, .init(userId: user.uid, tier: tier))
    }
}

/// A schedule JSON object for requests.
func scheduleJSON(_ type: String = "monthly", day: Int = 1, time: String = "09:00", zone: String = "UTC",
                  start: String = "2026-01-01T00:00:00Z") -> [String: Any] {
    var s: [String: Any] = ["type": type, "timeOfDay": time, "timezone": zone, "startDate": start]
    switch type {
    case "monthly": s["dayOfMonth"] = day; s["monthlyType"] = "fixed"
    case "weekly": s["daysOfWeek"] = [day]
    case "custom": s["intervalDays"] = day
    case "annual": s["month"] = 1; s["dayOfMonthAnnual"] = day
    default: break
    }
    return s
}
