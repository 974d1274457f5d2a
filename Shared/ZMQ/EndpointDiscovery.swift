import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds every replica behind a peer's DNS name: `tcp://alarms:7102`, where `alarms` resolves to
/// one address per replica (compose `--scale`, a headless Kubernetes Service), becomes one
/// endpoint per address, so a DEALER spreads its requests over all of them and a SUB hears every
/// producer replica. libzmq resolves a name itself only once per connection, to one address.
///
/// An endpoint whose host is an IP literal, `*`, or not `tcp://` is kept as it is. A name that
/// does not resolve (yet) is kept as the name, so libzmq goes on trying it; once it resolves, its
/// addresses replace it. Only IPv4 addresses are used (the sockets do not enable IPv6); a name
/// with none is kept as the name.
public struct EndpointDiscovery: Sendable {
    /// Resolves a host name to addresses (getaddrinfo by default; tests give their own).
    public typealias Resolve = @Sendable (String) -> [String]

    /// The endpoints as configured.
    public let configured: [String]
    private let resolve: Resolve

    public init(_ endpoints: [String], resolve: @escaping Resolve = EndpointDiscovery.addresses(of:)) {
        self.configured = endpoints
        self.resolve = resolve
    }

    /// Whether any configured endpoint names a host that discovery can expand.
    public var hasNames: Bool { configured.contains { Self.nameAndPort($0) != nil } }

    /// The endpoints to connect now for each configured endpoint. `previous`: what each one had;
    /// a name that does not resolve this time keeps its own addresses (a DNS hiccup must not
    /// disconnect live replicas), or stays the name when it never resolved.
    public func resolved(previous: [String: [String]] = [:]) -> [String: [String]] {
        var out: [String: [String]] = [:]
        for endpoint in configured {
            guard let (host, port) = Self.nameAndPort(endpoint) else {
                out[endpoint] = [endpoint]
                continue
            }
            let found = resolve(host).sorted()
            out[endpoint] = found.isEmpty ? (previous[endpoint] ?? [endpoint]) : found.map { "tcp://\($0):\(port)" }
        }
        return out
    }

    /// The endpoints of `resolved` in the configured order, each once.
    public func flatten(_ resolved: [String: [String]]) -> [String] {
        var seen = Set<String>()
        return configured.flatMap { resolved[$0] ?? [] }.filter { seen.insert($0).inserted }
    }

    /// The endpoints to connect now (``resolved(previous:)`` flattened).
    public func current() -> [String] { flatten(resolved()) }

    /// What to connect and disconnect to go from `connected` to `wanted`: new addresses are
    /// connected before anything is disconnected, so a request never lacks a route it had.
    public static func changes(from connected: [String], to wanted: [String]) -> (connect: [String], disconnect: [String]) {
        let have = Set(connected), want = Set(wanted)
        return (wanted.filter { !have.contains($0) }, connected.filter { !want.contains($0) })
    }

    /// `(host, port)` of a `tcp://host:port` endpoint whose host is a name; nil for an address.
    static func nameAndPort(_ endpoint: String) -> (String, String)? {
        guard endpoint.hasPrefix("tcp://") else { return nil }
        let rest = endpoint.dropFirst("tcp://".count)
        guard !rest.hasPrefix("["), let colon = rest.lastIndex(of: ":") else { return nil }
        let host = String(rest[..<colon]), port = String(rest[rest.index(after: colon)...])
        guard !host.isEmpty, host != "*", !host.contains(";"), Int(port) != nil, !isAddress(host) else { return nil }
        return (host, port)
    }

    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The IPv4 addresses `host` resolves to now (empty when it does not resolve).
    @Sendable public static func addresses(of host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var out = Set<String>()
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let n = node {
            if n.pointee.ai_family == AF_INET, let sa = n.pointee.ai_addr {
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var a = sin.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &a, &text, socklen_t(INET_ADDRSTRLEN))
                }
                out.insert(String(cString: text))
            }
            node = n.pointee.ai_next
        }
        return out.sorted()
    }
}
