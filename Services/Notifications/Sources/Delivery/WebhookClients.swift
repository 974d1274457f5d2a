import AsyncHTTPClient
import Contracts
import Foundation
import NIOCore
import NIOSSL
import Synchronization

/// The HTTP clients of webhook deliveries, apart from the one APNs and FCM share: redirects are
/// not followed, timeouts are short, and unless `CHRONIR_WEBHOOK_ALLOW_PRIVATE` is set each
/// destination is checked before anything connects to it (server-side request forgery).
///
/// A webhook's host name is resolved (``HostResolver``) and the delivery refused when any of its
/// addresses is internal (``WebhookAddress/isInternal(bytes:)``). Otherwise the request goes
/// through a client whose `dnsOverride` pins the host to the first address checked: the
/// connection goes there and nowhere else, whatever the name resolves to a moment later (DNS
/// rebinding); TLS is verified as without pinning (SNI and the name check use the host name, and
/// NIOSSL also accepts a certificate whose IP SAN is the connected address). Pinned clients are kept per host
/// and address, at most `capacity` of them; the least recently used idle one is shut down when
/// another is needed. An IP address in the URL is checked as it is and connected to directly.
final class WebhookClients: Sendable {
    /// What a delivery to a host may do.
    enum Route: Sendable, Equatable {
        /// Connect as the URL says: the host is a checked IP address, or checks are off.
        case direct
        /// Connect to this checked address of the host (and verify TLS for the host).
        case pinned(String)
        /// Never: the reason (the host is or resolves to an internal address).
        case refused(String)
        /// Not now: the host did not resolve (the reason); try again later.
        case unresolved(String)
    }

    /// Resolves a host name to its addresses (``HostResolver/resolve(_:timeout:)``; tests pass
    /// their own).
    typealias Resolve = @Sendable (String) async throws -> [HostResolver.Address]

    /// `CHRONIR_WEBHOOK_ALLOW_PRIVATE`: no address checks (local development and tests).
    let allowPrivate: Bool
    /// The most pinned clients kept.
    let capacity: Int
    private let eventLoopGroup: any EventLoopGroup
    private let configuration: HTTPClient.Configuration
    private let resolve: Resolve
    /// The client of ``Route/direct`` routes.
    private let direct: HTTPClient
    private let state = Mutex(State())

    private struct Pinned {
        var client: HTTPClient
        /// Requests using it now: it is not shut down while any is.
        var users: Int
        var lastUse: UInt64
    }

    private struct State {
        /// By `host|address`.
        var pinned: [String: Pinned] = [:]
        var clock: UInt64 = 0
        var closed = false
    }

    /// - Parameters:
    ///   - configuration: the settings of every client (``configuration(tls:concurrency:)``);
    ///     pinned ones add their `dnsOverride`.
    init(eventLoopGroup: any EventLoopGroup, configuration: HTTPClient.Configuration, allowPrivate: Bool, capacity: Int = 64,
         resolve: @escaping Resolve = { try await HostResolver.resolve($0) }) {
        self.eventLoopGroup = eventLoopGroup
        self.configuration = configuration
        self.allowPrivate = allowPrivate
        self.capacity = max(1, capacity)
        self.resolve = resolve
        self.direct = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }

    /// The settings of webhook clients: no redirects, connect within 3 s, a read idle for 5 s
    /// fails, HTTP/2 where offered, as many connections per host as sends in flight.
    static func configuration(tls: TLSConfiguration, concurrency: Int) -> HTTPClient.Configuration {
        var c = HTTPClient.Configuration(tlsConfiguration: tls)
        c.redirectConfiguration = .disallow
        c.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(3), read: .seconds(5))
        c.httpVersion = .automatic
        c.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(32, concurrency))
        return c
    }

    /// The host of `url` as the HTTP client connects to it (and looks it up in `dnsOverride`):
    /// `URL.host` without IPv6 brackets.
    static func host(of url: URL) -> String? {
        guard var host = url.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : host
    }

    /// Where a delivery to `host` may connect, after the checks (none when ``allowPrivate``).
    func route(host: String) async -> Route {
        if allowPrivate { return .direct }
        if let bytes = WebhookAddress.ipBytes(host) {
            if WebhookAddress.isInternal(bytes: bytes) {
                return .refused("webhook host \(host) is an internal address")
            }
            // An address the HTTP client reads as one itself is connected to as written.
            if (try? SocketAddress(ipAddress: host, port: 0)) != nil { return .direct }
        }
        let addresses: [HostResolver.Address]
        do {
            addresses = try await resolve(host)
        } catch {
            return .unresolved("\(error)")
        }
        if let inside = addresses.first(where: { WebhookAddress.isInternal(bytes: $0.bytes) }) {
            return .refused("webhook host \(host) resolves to an internal address (\(inside))")
        }
        guard let first = addresses.first else { return .unresolved("cannot resolve \(host)") }
        return .pinned(first.description)
    }

    /// Runs `body` with the client of `route` for `host`; nil for a refused or unresolved route,
    /// or once shut down.
    func withClient<T>(_ route: Route, host: String, _ body: (HTTPClient) async -> T) async -> T? {
        switch route {
        case .direct:
            guard !state.withLock({ $0.closed }) else { return nil }
            return await body(direct)
        case .pinned(let address):
            let key = "\(host)|\(address)"
            let (client, evicted) = checkOut(key, host: host, address: address)
            for old in evicted { try? await old.shutdown() }
            guard let client else { return nil }
            let result = await body(client)
            checkIn(key)
            return result
        case .refused, .unresolved:
            return nil
        }
    }

    /// The `host|address` keys of the pinned clients kept now (tests).
    var pinnedKeys: [String] {
        state.withLock { $0.pinned.keys.sorted() }
    }

    /// Shuts every client down; later deliveries find none (``withClient(_:host:_:)`` is nil).
    func shutdown() async {
        let clients = state.withLock { s in
            s.closed = true
            let all = s.pinned.values.map(\.client)
            s.pinned = [:]
            return all
        }
        for client in clients { try? await client.shutdown() }
        try? await direct.shutdown()
    }

    /// The pinned client of `key`, made if needed, counted in use; and the idle clients evicted
    /// to stay within ``capacity`` (the caller shuts them down).
    private func checkOut(_ key: String, host: String, address: String) -> (HTTPClient?, [HTTPClient]) {
        state.withLock { s in
            guard !s.closed else { return (nil, []) }
            s.clock += 1
            if var entry = s.pinned[key] {
                entry.users += 1
                entry.lastUse = s.clock
                s.pinned[key] = entry
                return (entry.client, [])
            }
            var c = configuration
            c.dnsOverride = [host: address]
            let client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: c)
            s.pinned[key] = Pinned(client: client, users: 1, lastUse: s.clock)
            var evicted: [HTTPClient] = []
            while s.pinned.count > capacity,
                  let oldest = s.pinned.filter({ $0.value.users == 0 }).min(by: { $0.value.lastUse < $1.value.lastUse }) {
                s.pinned[oldest.key] = nil
                evicted.append(oldest.value.client)
            }
            return (client, evicted)
        }
    }

    private func checkIn(_ key: String) {
        state.withLock { s in
            guard var entry = s.pinned[key] else { return }
            entry.users -= 1
            s.pinned[key] = entry
        }
    }
}
