import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a webhook may point: the rules that keep a user's `webhookUrl` from reaching inside
/// the deployment (server-side request forgery). The accounts service applies
/// ``registrationProblem(_:)`` when a device is registered; the notifications service applies it
/// again before each delivery, resolves the host and refuses it when any of its addresses is
/// ``isInternal(_:)``, and then connects to a checked address only. Both are switched off by
/// `CHRONIR_WEBHOOK_ALLOW_PRIVATE=1` (local development and tests).
public enum WebhookAddress {
    /// Whether `address`, an IP address in text, is one a webhook must not reach: loopback,
    /// unspecified, private, link-local, unique-local, site-local, multicast, carrier-grade NAT,
    /// reserved, broadcast, benchmarking, documentation, IETF protocol assignments, or an IPv6
    /// address outside the global unicast block `2000::/3`. IPv4 is read the way `inet_aton`
    /// reads it (so `2130706433`, `0x7f.1` and `017700000001` are all 127.0.0.1), IPv6 with
    /// `inet_pton` (brackets and a zone id such as `%eth0` stripped); IPv4-mapped
    /// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`), 6to4 and Teredo
    /// addresses are judged by the IPv4 address they carry. Text that is not an IP address is
    /// not internal (a host name is judged by what it resolves to).
    public static func isInternal(_ address: String) -> Bool {
        guard let bytes = ipBytes(address) else { return false }
        return isInternal(bytes: bytes)
    }

    /// Whether the raw address `bytes` (4 for IPv4, 16 for IPv6, network order) is internal,
    /// by the rules of ``isInternal(_:)``. Any other length counts as internal.
    public static func isInternal(bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4: return isInternalIPv4(bytes)
        case 16: return isInternalIPv6(bytes)
        default: return true
        }
    }

    /// The bytes of `text` read as an IP address (4 or 16, network order), or nil when it is not
    /// one. IPv4 follows `inet_aton` (decimal, octal and hexadecimal parts, one to four of
    /// them); IPv6 follows `inet_pton`, after stripping `[` `]` and a `%zone`.
    public static func ipBytes(_ text: String) -> [UInt8]? {
        var t = Substring(text)
        if t.hasPrefix("["), t.hasSuffix("]") { t = t.dropFirst().dropLast() }
        if let percent = t.firstIndex(of: "%") { t = t[..<percent] }
        let s = String(t)
        guard !s.isEmpty else { return nil }
        if s.contains(":") {
            var bytes = [UInt8](repeating: 0, count: 16)
            guard inet_pton(AF_INET6, s, &bytes) == 1 else { return nil }
            return bytes
        }
        var addr = in_addr()
        guard inet_aton(s, &addr) != 0 else { return nil }
        let v = UInt32(bigEndian: addr.s_addr)
        return [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
    }

    /// Why `url` cannot be a device's `webhookUrl`, as a message naming the field, or nil when it
    /// can: it must be `http` or `https` with a host; not `localhost` or a name under
    /// `.localhost`; not an internal IP address (``isInternal(_:)``); with no user name or
    /// password; and on its scheme's default port (80 for http, 443), port 443, or a port
    /// from 1024 up. Host names are not resolved here: delivery checks what they resolve to.
    public static func registrationProblem(_ url: String) -> String? {
        guard let u = URL(string: url), let scheme = u.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "webhookUrl must be an http(s) URL"
        }
        guard let rawHost = u.host, !rawHost.isEmpty else { return "webhookUrl must name a host" }
        if u.user != nil || u.password != nil || authority(of: url).contains("@") {
            return "webhookUrl must not carry a user name or password"
        }
        var host = rawHost.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), !host.hasSuffix("..") { host = String(host.dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") {
            return "webhookUrl must not point at localhost"
        }
        if let bytes = ipBytes(host), isInternal(bytes: bytes) {
            return "webhookUrl must not point at a loopback, private, link-local or otherwise internal address"
        }
        if let port = u.port {
            let isDefault = port == 443 || (port == 80 && scheme == "http")
            guard isDefault || (1024...65_535).contains(port) else {
                return "webhookUrl must use port 443, 80 with http, or a port from 1024 to 65535"
            }
        }
        return nil
    }

    /// What lies between `://` and the path, query or fragment of `url` (userinfo, host, port).
    static func authority(of url: String) -> Substring {
        guard let start = url.range(of: "://")?.upperBound else { return "" }
        let rest = url[start...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" || $0 == "\\" } ?? rest.endIndex
        return rest[..<end]
    }

    // MARK: Ranges

    /// IPv4 blocks a webhook must not reach: (network, prefix length).
    static let internalIPv4: [(network: UInt32, bits: Int)] = [
        (0x0000_0000, 8),   // 0.0.0.0/8 unspecified, "this network"
        (0x0A00_0000, 8),   // 10.0.0.0/8 private
        (0x6440_0000, 10),  // 100.64.0.0/10 carrier-grade NAT
        (0x7F00_0000, 8),   // 127.0.0.0/8 loopback
        (0xA9FE_0000, 16),  // 169.254.0.0/16 link-local (cloud metadata)
        (0xAC10_0000, 12),  // 172.16.0.0/12 private
        (0xC000_0000, 24),  // 192.0.0.0/24 IETF protocol assignments
        (0xC000_0200, 24),  // 192.0.2.0/24 documentation (TEST-NET-1)
        (0xC0A8_0000, 16),  // 192.168.0.0/16 private
        (0xC612_0000, 15),  // 198.18.0.0/15 benchmarking
        (0xC633_6400, 24),  // 198.51.100.0/24 documentation (TEST-NET-2)
        (0xCB00_7100, 24),  // 203.0.113.0/24 documentation (TEST-NET-3)
        (0xE000_0000, 4),   // 224.0.0.0/4 multicast
        (0xF000_0000, 4),   // 240.0.0.0/4 reserved, with 255.255.255.255 broadcast
    ]

    static func isInternalIPv4(_ b: [UInt8]) -> Bool {
        let v = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
        return internalIPv4.contains { block in
            let mask: UInt32 = block.bits == 0 ? 0 : ~UInt32(0) << UInt32(32 - block.bits)
            return v & mask == block.network
        }
    }

    static func isInternalIPv6(_ b: [UInt8]) -> Bool {
        func zero(_ range: Range<Int>) -> Bool { b[range].allSatisfy { $0 == 0 } }
        let last4 = Array(b[12..<16])
        // ::/96 (::, ::1, IPv4-compatible ::a.b.c.d): judged as 0.0.0.0, 0.0.0.1 and a.b.c.d.
        if zero(0..<12) { return isInternalIPv4(last4) }
        // ::ffff:a.b.c.d, IPv4-mapped.
        if zero(0..<10), b[10] == 0xff, b[11] == 0xff { return isInternalIPv4(last4) }
        // ::ffff:0:a.b.c.d, IPv4-translated (SIIT).
        if zero(0..<8), b[8] == 0xff, b[9] == 0xff, b[10] == 0, b[11] == 0 { return isInternalIPv4(last4) }
        // 64:ff9b::/96, NAT64 well-known prefix.
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, zero(4..<12) { return isInternalIPv4(last4) }
        // 2002::/16, 6to4: the IPv4 address follows the prefix.
        if b[0] == 0x20, b[1] == 0x02 { return isInternalIPv4(Array(b[2..<6])) }
        // 2001:0::/32, Teredo: the client's IPv4 address, inverted, ends it.
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x00, b[3] == 0x00 { return isInternalIPv4(last4.map { ~$0 }) }
        // 2001:db8::/32, documentation.
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0d, b[3] == 0xb8 { return true }
        // Outside 2000::/3 (global unicast): 64:ff9b:1::/48 local-use NAT64, 100::/64 discard,
        // fc00::/7 unique-local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast
        // and everything reserved.
        return b[0] & 0xe0 != 0x20
    }
}
