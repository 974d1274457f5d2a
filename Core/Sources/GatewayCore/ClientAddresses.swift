import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`)
/// is read as the IPv4 address it maps.
public struct IPAddress: Sendable, Hashable {
    /// 4 bytes, or 16.
    public let bytes: [UInt8]

    /// Reads `text` (`192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, with a zone `%eth0` dropped);
    /// nil when it is not an address.
    public init?(_ text: some StringProtocol) {
        var s = String(text).trimmingCharacters(in: .whitespaces)
        if s.hasPrefix("["), s.hasSuffix("]") { s = String(s.dropFirst().dropLast()) }
        if let zone = s.firstIndex(of: "%") { s = String(s[..<zone]) }
        guard !s.isEmpty, s.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, s, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, s, &v6) == 1 else { return nil }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        if b[0..<10].allSatisfy({ $0 == 0 }), b[10] == 0xff, b[11] == 0xff {
            bytes = Array(b[12..<16])
        } else {
            bytes = b
        }
    }

    public init(bytes: [UInt8]) { self.bytes = bytes }

    public var isIPv6: Bool { bytes.count == 16 }

    /// What per-address limits count under: an IPv4 address as itself, an IPv6 address by its
    /// /64 (one subscriber's prefix: an attacker holding a /64 is one client, not 2⁶⁴).
    public var limitKey: String {
        guard isIPv6 else { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

/// A block of addresses in CIDR notation (`10.0.0.0/8`, `fd00::/8`, or one address).
public struct CIDRBlock: Sendable, Hashable {
    public let base: IPAddress
    public let prefix: Int

    /// Reads `text`; nil when it is not an address with an optional `/prefix` in range.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let base = IPAddress(parts[0]) else { return nil }
        let width = base.bytes.count * 8
        // An IPv4-mapped block (::ffff:10.0.0.0/104) reads as the IPv4 block it maps.
        let mappedShift = parts[0].contains(":") && !base.isIPv6 ? 96 : 0
        let prefix: Int
        if parts.count == 2 {
            guard let p = Int(parts[1]), (mappedShift...(width + mappedShift)).contains(p) else { return nil }
            prefix = p - mappedShift
        } else {
            prefix = width
        }
        self.base = base
        self.prefix = prefix
    }

    /// Whether `address` is in the block (never across families).
    public func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == base.bytes.count else { return false }
        var bits = prefix
        for (a, b) in zip(address.bytes, base.bytes) {
            guard bits > 0 else { return true }
            let mask: UInt8 = bits >= 8 ? 0xff : ~(0xff >> UInt8(bits))
            if a & mask != b & mask { return false }
            bits -= 8
        }
        return true
    }
}

/// The client a request comes from, as per-address limits count it (`CHRONIR_TRUSTED_PROXIES`).
///
/// The TCP peer is the client unless it is one of the trusted proxies. From a trusted proxy the
/// client is read from `X-Forwarded-For` (or, without it, RFC 7239 `Forwarded: for=`): the
/// addresses are walked from the right (the hop nearest this server) past every trusted proxy,
/// and the first address that is not one is the client. Entries to its left were written by
/// the client itself and are never believed. A hop that is not an address (`unknown`, an
/// obfuscated identifier, garbage) ends the walk at the trusted proxy that reported it, so a
/// client cannot pick its key by sending something unparseable.
///
/// IPv6 clients are keyed by their /64 (``IPAddress/limitKey``).
public struct ClientAddresses: Sendable {
    /// The trusted proxies.
    public let trusted: [CIDRBlock]

    public init(trusted: [CIDRBlock]) {
        self.trusted = trusted
    }

    /// An entry of the trusted proxies that is not an address or a CIDR block.
    public struct BadEntry: Error, Sendable, Equatable {
        /// The entry as given.
        public let entry: String

        public init(entry: String) {
            self.entry = entry
        }
    }

    /// Reads a comma- or space-separated list of CIDR blocks; throws naming the first bad entry.
    public static func parse(_ text: String?) throws(BadEntry) -> ClientAddresses {
        guard let text else { return ClientAddresses(trusted: []) }
        var blocks: [CIDRBlock] = []
        for entry in text.split(whereSeparator: { $0 == "," || $0 == " " }) where !entry.isEmpty {
            guard let block = CIDRBlock(entry) else { throw BadEntry(entry: String(entry)) }
            blocks.append(block)
        }
        return ClientAddresses(trusted: blocks)
    }

    public func isTrusted(_ address: IPAddress) -> Bool { trusted.contains { $0.contains(address) } }

    /// The limit key of the client of a request whose TCP peer is `peer` (text as NIO gives it)
    /// and whose forwarding headers name `hops` (``hops(xForwardedFor:forwarded:)``), nearest last.
    public func key(peer: String?, hops: [String]) -> String {
        guard let peer, let peerAddress = IPAddress(peer) else { return peer ?? "unknown" }
        guard isTrusted(peerAddress) else { return peerAddress.limitKey }
        var client = peerAddress
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { break }
            client = address
            if !isTrusted(address) { break }
        }
        return client.limitKey
    }

    /// The hops of `X-Forwarded-For` (its field lines, in order), or of `Forwarded`'s `for=`
    /// parameters (its field lines) when there is no `X-Forwarded-For`.
    public static func hops(xForwardedFor xff: [String], forwarded: [String]) -> [String] {
        if !xff.isEmpty {
            return xff.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        }
        var hops: [String] = []
        for line in forwarded {
            for element in line.split(separator: ",") {
                let pair = element.split(separator: ";").first { $0.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("for=") }
                guard let pair else { hops.append("unknown"); continue }
                var value = pair.trimmingCharacters(in: .whitespaces).dropFirst(4)
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
                // "[2001:db8::1]:4711" or "192.0.2.1:4711": the port is not part of the address.
                if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
                    value = value[value.index(after: value.startIndex)..<close]
                } else if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") {
                    value = value[..<colon]
                }
                hops.append(String(value))
            }
        }
        return hops
    }

    /// The /48 of an IPv6 limit key (`2001:db8:1:2::/64` → `2001:db8:1::/48`), which per-address
    /// limits also count under; nil for IPv4 and anything else.
    public static func prefix48(of key: String) -> String? {
        guard key.hasSuffix("::/64") else { return nil }
        let groups = key.dropLast(5).split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count == 4 else { return nil }
        return groups.prefix(3).joined(separator: ":") + "::/48"
    }
}
