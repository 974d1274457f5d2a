import AccountsService
import AsyncHTTPClient
import NotificationsCore
import Contracts
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOSSL
@testable import NotificationsService
import SchedulerService
import ServiceKit
import Support
@testable import SuiteSupport
import Synchronization
import Testing

/// "Webhook URLs cannot reach inside": server-side request forgery through a device's
/// `webhookUrl`, tried as an attacker would, with the address checks on as deployed
/// (`CHRONIR_WEBHOOK_ALLOW_PRIVATE=0`; the harness turns them off for the other tests).
@Suite("Webhook SSRF")
struct WebhookSSRFTests {
    /// The checks on, as in a deployment.
    static let checksOn = ["CHRONIR_WEBHOOK_ALLOW_PRIVATE": "0"]

    static let content = PushContent(type: "alarm_fired", title: "Chronir: Probe", body: "Probe", data: ["alarmId": "a1"], urgent: true,
                                     deepLink: nil, collapseKey: nil)

    static func target(_ url: String) -> PushTarget {
        PushTarget(deliveryId: 1, eventId: "e1", userId: "u1", deviceId: "hook", provider: "webhook", token: nil, webhookUrl: url)
    }

    /// Webhook clients as the notifications service makes them from its environment, trusting the
    /// fake push server's certificate.
    static func clients(_ push: FakePushServer, allowPrivate: Bool) throws -> (WebhookClients, WebhookProvider) {
        let config = try NotificationsConfig(environment: ServiceEnvironment([
            "CHRONIR_WEBHOOK_SECRET": push.webhookSecret, "CHRONIR_PUSH_CA_FILE": push.certFile,
            "CHRONIR_WEBHOOK_ALLOW_HTTP": "1", "CHRONIR_WEBHOOK_ALLOW_PRIVATE": allowPrivate ? "1" : "0",
        ]))
        guard let clients = try config.makeWebhookClients(eventLoopGroup: HTTPClient.defaultEventLoopGroup) else {
            throw TestSetupError("no webhook clients with CHRONIR_WEBHOOK_SECRET set")
        }
        let provider = WebhookProvider(secret: SymmetricKey(data: Data(push.webhookSecret.utf8)), clients: clients, allowHTTP: config.webhookAllowHTTP)
        return (clients, provider)
    }

    /// Plain clients (no extra CA) for the local HTTP servers of these tests.
    static func plainClients(allowPrivate: Bool, capacity: Int = 64,
                             resolve: @escaping WebhookClients.Resolve = { try await HostResolver.resolve($0) }) -> WebhookClients {
        WebhookClients(eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                       configuration: WebhookClients.configuration(tls: TLSConfiguration.makeClientConfiguration(), concurrency: 4),
                       allowPrivate: allowPrivate, capacity: capacity, resolve: resolve)
    }

    /// A signed webhook request to `url`, as the provider sends it.
    static func signedRequest(_ url: String, secret: String) throws -> HTTPClientRequest {
        let body = try WebhookProvider.body(content, target: target(url))
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "x-chronir-signature",
                            value: WebhookProvider.signature(secret: SymmetricKey(data: Data(secret.utf8)), timestamp: Int(Date().timeIntervalSince1970), body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        return request
    }

    static func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> HostResolver.Address {
        HostResolver.Address(bytes: [a, b, c, d])
    }

    static func isRefused(_ route: WebhookClients.Route) -> Bool {
        if case .refused = route { return true }
        return false
    }

    // MARK: Registration, through the gateway

    @Test("registration refuses webhook URLs that point inside: 400 CA016 naming webhookUrl; a public URL is accepted")
    func registrationRefusesInternalURLs() async throws {
        try await withTestSuite(label: "ssrf-register", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, extra: Self.checksOn, build: AccountsService.build)
            try s.startGateway()
        }) { s in
            let mallory = try await s.signup("Mallory")
            let gateway = try await s.gatewayURL()
            let gatewayPort = URL(string: gateway)?.port ?? 8080
            let refused = [
                "http://127.0.0.1:\(gatewayPort)/x", "https://169.254.169.254/latest/meta-data/", "http://localhost:8080/",
                "https://[::1]/", "https://10.0.0.1/", "http://2130706433/", "http://0x7f.1:5432/", "http://[::ffff:127.0.0.1]/",
                "https://metadata.localhost/", "https://192.168.1.1:8443/", "https://[fd00::1]/", "https://100.100.100.200/",
                "https://hooks.example.com:22/", "https://user:pw@hooks.example.com/",
            ]
            for (i, url) in refused.enumerated() {
                let r = try await s.request(.PUT, "/v1/me/devices/probe\(i)", token: mallory.token, json: ["platform": "web", "webhookUrl": url])
                #expect(r.status == 400, "\(url): \(r.status) \(r.text)")
                #expect(r.code == "CA016", "\(url): \(r.text)")
                #expect(r.json["message"]?.stringValue?.contains("webhookUrl") == true, "\(url): \(r.text)")
            }
            // A webhookUrl is checked whatever the provider that carries the pushes.
            let apns = try await s.request(.PUT, "/v1/me/devices/phone", token: mallory.token,
                                           json: ["platform": "ios", "pushToken": "t", "webhookUrl": "http://127.0.0.1:5432/"])
            #expect(apns.status == 400, "\(apns.text)")
            #expect(apns.code == "CA016")

            for (id, url) in [("good", "https://hooks.example.com/x"), ("good-port", "https://hooks.example.com:8443/x")] {
                let ok = try await s.request(.PUT, "/v1/me/devices/\(id)", token: mallory.token, json: ["platform": "web", "webhookUrl": url])
                #expect(ok.status == 200 || ok.status == 201, "\(url): \(ok.text)")
            }
            let list = try await s.request(.GET, "/v1/me/devices", token: mallory.token)
            let ids = list.json["devices"]?.arrayValue?.compactMap { $0["deviceId"]?.stringValue } ?? []
            #expect(Set(ids) == ["good", "good-port"], "\(list.text)")
        }
    }

    // MARK: Delivery, through the services

    @Test("a webhook registered before the checks, pointing at this machine, is refused at delivery: failed at once, nothing received")
    func deliveryRefusesLegacyInternalWebhook() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let port = push.port.withLock { $0 } ?? 0
        try await withTestSuite(label: "ssrf-deliver", start: { s in
            // Accounts with the harness's CHRONIR_WEBHOOK_ALLOW_PRIVATE=1: registered as before the checks.
            try s.startCore()
            try s.start("scheduler", migrations: SchedulerService.migrations,
                        extra: ["CHRONIR_SCHEDULER_PARTITIONS": "16"], build: SchedulerService.build)
            try s.start("notifications", migrations: NotificationsService.migrations,
                        extra: push.environment.merging(["CHRONIR_DELIVERY_POLL": "50ms"]) { $1 }.merging(Self.checksOn) { $1 },
                        build: NotificationsService.build)
        }) { s in
            let u = try await s.signup("Legacy")
            for (id, url) in [("hook-name", "\(push.baseURL)/hook/legacy"), ("hook-ip", "https://127.0.0.1:\(port)/hook/legacy-ip")] {
                let r = try await s.request(.PUT, "/v1/me/devices/\(id)", token: u.token, json: ["platform": "web", "webhookUrl": url])
                #expect(r.status == 200 || r.status == 201, "\(r.text)")
            }
            try await s.waitForDevices(u, count: 2)
            let created = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Probe", "schedule": scheduleJSON("annual", day: 1)])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            try await s.fireAgain(id)

            // Both deliveries fail at their first attempt (not retried), with the reason.
            func states() async -> [String] {
                let rows = try? await s.inDatabase("notifications") {
                    try await $0.query("""
                        SELECT device_id || ':' || state || ':' || attempts || ':' || coalesce(last_error, '') FROM deliveries
                        WHERE user_id = \(u.uid)
                        """).all(String.self)
                }
                return (rows ?? []).sorted()
            }
            let settled = await eventually(timeout: .seconds(20)) {
                let rows = await states()
                return rows.count == 2 && rows.allSatisfy { $0.contains(":failed:") }
            }
            let rows = await states()
            #expect(settled, "\(rows)")
            #expect(rows.count == 2)
            #expect(rows.first?.hasPrefix("hook-ip:failed:1:") == true, "\(rows)")
            #expect(rows.first?.contains("internal address") == true, "\(rows)")
            #expect(rows.last?.hasPrefix("hook-name:failed:1:") == true, "\(rows)")
            #expect(rows.last?.contains("localhost") == true, "\(rows)")
            // The inbox still has it; the local server heard nothing.
            #expect(await s.inboxCount(u) == 1)
            // Both deliveries are recorded as finished (above): any connection was made before that.
            #expect(push.requests("webhook").isEmpty, "\(push.requests("webhook").map(\.path))")
        }
    }

    // MARK: Delivery, the provider on its own

    @Test("the provider refuses this machine by name or address in every notation, before connecting")
    func providerRefusesBeforeConnecting() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let port = push.port.withLock { $0 } ?? 0
        let (clients, provider) = try Self.clients(push, allowPrivate: false)
        #expect(!clients.allowPrivate)
        var results: [(String, PushResult)] = []
        for url in ["https://localhost:\(port)/hook/x", "http://127.0.0.1:\(port)/hook/x", "https://127.0.0.1:\(port)/hook/x",
                    "https://[::1]:\(port)/hook/x", "https://0x7f.1:\(port)/hook/x", "https://2130706433:\(port)/hook/x",
                    "https://[::ffff:127.0.0.1]:\(port)/hook/x", "https://127.0.0.1:22/hook/x"] {
            results.append((url, await provider.send(Self.content, to: Self.target(url))))
        }
        // A name is refused for what it resolves to (here the system resolver's localhost).
        let localhost = await clients.route(host: "localhost")
        await clients.shutdown()
        for (url, r) in results {
            #expect(r.outcome == .failed, "\(url): \(r)")
            #expect(r.status == 0, "\(url): \(r)")
        }
        #expect(Self.isRefused(localhost), "\(localhost)")
        // Every send returned and the clients are shut down: any connection was made before.
        #expect(push.received.withLock { $0.isEmpty }, "\(push.received.withLock { $0.map(\.path) })")
    }

    @Test("a name with any internal address is refused; a public one is pinned to the address checked; a failed lookup is retried")
    func resolvedAddressesChecked() async throws {
        let mapped = HostResolver.Address(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 169, 254])
        let clients = Self.plainClients(allowPrivate: false, capacity: 2) { host in
            switch host {
            case "rebind.example": return [Self.v4(93, 184, 216, 34), Self.v4(127, 0, 0, 1)]
            case "inside.example": return [Self.v4(10, 0, 0, 5)]
            case "metadata.example": return [mapped]
            case "public.example": return [Self.v4(93, 184, 216, 34), Self.v4(93, 184, 216, 35)]
            case "a.example": return [Self.v4(1, 1, 1, 1)]
            case "b.example": return [Self.v4(1, 0, 0, 1)]
            default: throw HostResolver.Failure(description: "cannot resolve \(host)")
            }
        }
        let provider = WebhookProvider(secret: SymmetricKey(size: .bits256), clients: clients, allowHTTP: false)
        #expect(Self.isRefused(await clients.route(host: "rebind.example")))
        #expect(Self.isRefused(await clients.route(host: "inside.example")))
        #expect(Self.isRefused(await clients.route(host: "metadata.example")))
        #expect(Self.isRefused(await clients.route(host: "10.0.0.1")))
        #expect(await clients.route(host: "public.example") == .pinned("93.184.216.34"))
        #expect(await clients.route(host: "8.8.8.8") == .direct)
        #expect(await clients.route(host: "2606:4700::1111") == .direct)
        if case .unresolved = await clients.route(host: "nowhere.example") {} else { Issue.record("a failed lookup is not unresolved") }

        let rebind = await provider.send(Self.content, to: Self.target("https://rebind.example/hook"))
        #expect(rebind.outcome == .failed)
        #expect(rebind.reason?.contains("internal address") == true, "\(rebind)")
        let nowhere = await provider.send(Self.content, to: Self.target("https://nowhere.example/hook"))
        #expect(nowhere.outcome == .retry, "\(nowhere)")

        // Pinned clients are kept per host and address, the least recently used idle one evicted.
        for (host, address) in [("public.example", "93.184.216.34"), ("a.example", "1.1.1.1"), ("public.example", "93.184.216.34"),
                                ("b.example", "1.0.0.1")] {
            let used = await clients.withClient(.pinned(address), host: host) { _ in true }
            #expect(used == true)
        }
        #expect(clients.pinnedKeys == ["b.example|1.0.0.1", "public.example|93.184.216.34"])
        await clients.shutdown()
        #expect(clients.pinnedKeys.isEmpty)
        let afterShutdown = await clients.withClient(.direct, host: "8.8.8.8") { _ in true }
        #expect(afterShutdown == nil, "a client after shutdown")
    }

    @Test("a pinned client connects to the checked address, not to what the name resolves to, with TLS for the URL's name")
    func pinnedClientConnectsToCheckedAddress() async throws {
        let push = try FakePushServer()
        try await push.start()
        defer { push.stop() }
        let recorder = LocalHTTPServer()
        try await recorder.start { _ in Response(status: .noContent) }
        defer { recorder.stop() }
        let (clients, _) = try Self.clients(push, allowPrivate: false)
        let port = push.port.withLock { $0 } ?? 0
        // TLS to the fake push server's certificate for "localhost", connected at 127.0.0.1.
        let tls = try Self.signedRequest("https://localhost:\(port)/hook/pinned", secret: push.webhookSecret)
        let overTLS = await clients.withClient(.pinned("127.0.0.1"), host: "localhost") { await WebhookProvider.execute($0, tls, deadline: .seconds(10)) }
        // A name that resolves nowhere (.invalid) reaches the address it is pinned to.
        let plain = try Self.signedRequest("http://pinned.invalid:\(recorder.port)/hook/pinned", secret: push.webhookSecret)
        let overHTTP = await clients.withClient(.pinned("127.0.0.1"), host: "pinned.invalid") { await WebhookProvider.execute($0, plain, deadline: .seconds(10)) }
        // (TLS is checked as without pinning: SNI and the name check use the URL's host, and
        // NIOSSL also accepts a certificate whose IP SAN is the connected address — the test
        // certificate has 127.0.0.1 — so a wrong-name case cannot be shown with it.)
        await clients.shutdown()
        #expect(overTLS?.outcome == .sent, "\(String(describing: overTLS))")
        #expect(push.requests("webhook").map(\.path) == ["/hook/pinned"])
        #expect(overHTTP?.outcome == .sent, "\(String(describing: overHTTP))")
        #expect(recorder.received.withLock { $0 } == ["POST /hook/pinned"])
    }

    @Test("a redirect is not followed, not even with the address checks off: the delivery fails and the target hears nothing",
          arguments: [301, 302, 303, 307, 308])
    func redirectNotFollowed(_ status: Int) async throws {
        let secret = LocalHTTPServer()
        try await secret.start { _ in Response(status: .ok) }
        defer { secret.stop() }
        let target = "\(secret.baseURL)/secret"
        let redirector = LocalHTTPServer()
        try await redirector.start { _ in Response(status: .init(code: status), headers: [.location: target]) }
        defer { redirector.stop() }
        let clients = Self.plainClients(allowPrivate: true)
        let provider = WebhookProvider(secret: SymmetricKey(size: .bits256), clients: clients, allowHTTP: true)
        let r = await provider.send(Self.content, to: Self.target("\(redirector.baseURL)/hook/x"))
        await clients.shutdown()
        #expect(r.outcome == .failed, "\(r)")
        #expect(r.status == status)
        #expect(r.reason?.contains("redirects are not followed") == true, "\(r)")
        #expect(redirector.received.withLock { $0 } == ["POST /hook/x"])
        // The send returned and the clients are shut down: a followed redirect would be in by now.
        #expect(secret.received.withLock { $0.isEmpty }, "\(secret.received.withLock { $0 })")
    }

    @Test("an error body reaches the reason (logged, stored, exported) only as 64 bytes without control characters")
    func errorBodyTrimmed() async throws {
        let leak = "line one\r\nline\u{1b}[31m two\u{202e}\u{0}" + String(repeating: "s", count: 500)
        let server = LocalHTTPServer()
        try await server.start { _ in Response(status: .init(code: 400), body: .init(byteBuffer: ByteBuffer(string: leak))) }
        defer { server.stop() }
        let clients = Self.plainClients(allowPrivate: true)
        let provider = WebhookProvider(secret: SymmetricKey(size: .bits256), clients: clients, allowHTTP: true)
        let r = await provider.send(Self.content, to: Self.target("\(server.baseURL)/hook/x"))
        await clients.shutdown()
        #expect(r.outcome == .failed, "\(r)")
        let reason = try #require(r.reason)
        #expect(reason.hasPrefix("HTTP 400: line one"), "\(reason)")
        #expect(reason.utf8.count <= "HTTP 400: ".utf8.count + WebhookProvider.reasonBodyBytes, "\(reason)")
        let hidden = reason.unicodeScalars.filter { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }
        #expect(hidden.isEmpty, "\(reason.debugDescription)")
        #expect(WebhookProvider.reason(status: 500, body: []) == "HTTP 500")
        #expect(WebhookProvider.reason(status: 302, body: Array("moved".utf8)) == "HTTP 302 (redirects are not followed): moved")
    }
}

/// A plain HTTP server on 127.0.0.1 for these tests: answers every request with `answer` and
/// records each as "METHOD /path".
final class LocalHTTPServer: Sendable {
    let received = Mutex<[String]>([])
    private let listening = Mutex<Int?>(nil)
    private let task = Mutex<Task<Void, any Error>?>(nil)

    var port: Int { listening.withLock { $0 } ?? 0 }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    func start(_ answer: @escaping @Sendable (Request) async throws -> Response) async throws {
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            self.received.withLock { $0.append("\(request.method.rawValue) \(request.uri.path)") }
            return try await answer(request)
        }
        let app = Application(responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in self.listening.withLock { $0 = channel.localAddress?.port } })
        task.withLock { $0 = Task { try await app.runService() } }
        guard await eventually(timeout: .seconds(10), { self.listening.withLock { $0 } != nil }) else {
            throw TestSetupError("the local HTTP server did not start")
        }
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }
}
