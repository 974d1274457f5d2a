import GatewayCore
import Testing

/// Who a request comes from (``ClientAddresses``), without a gateway: the key per-address
/// limits count under, from the TCP peer, the trusted proxies and the forwarding headers.
@Suite("Client addresses")
struct ClientAddressesTests {
    static let proxies = try! ClientAddresses.parse("10.0.0.0/8, ::1, 127.0.0.1")

    @Test("the client's key", arguments: [
        // (peer, X-Forwarded-For lines, Forwarded lines, key)
        ("203.0.113.9", ["198.51.100.1"], [], "203.0.113.9"),                              // an untrusted peer names no one
        ("10.1.2.3", ["198.51.100.1"], [], "198.51.100.1"),                                // a trusted proxy's client
        ("10.1.2.3", ["6.6.6.6, 198.51.100.1"], [], "198.51.100.1"),                      // the client's own left-hand entry is not believed
        ("10.1.2.3", ["6.6.6.6", "198.51.100.1, 10.9.9.9"], [], "198.51.100.1"),          // every line, walked from the right past proxies
        ("10.1.2.3", ["6.6.6.6, garbage"], [], "10.1.2.3"),                               // a hop that is not an address stops at the proxy
        ("10.1.2.3", ["unknown"], [], "10.1.2.3"),
        ("10.1.2.3", [], ["for=\"203.0.113.5:4711\";proto=https"], "203.0.113.5"),        // RFC 7239 with a port
        ("10.1.2.3", [], ["for=\"[2001:db8:1:2::7]:443\""], "2001:db8:1:2::/64"),         // IPv6 by its /64
        ("10.1.2.3", [], ["proto=https"], "10.1.2.3"),                                    // no for=: unknown
        ("10.1.2.3", ["198.51.100.1"], ["for=6.6.6.6"], "198.51.100.1"),                  // X-Forwarded-For wins
        ("::1", ["2001:db8:1:2:ffff:ffff:ffff:fffe"], [], "2001:db8:1:2::/64"),
        ("::ffff:10.0.0.1", ["192.0.2.44"], [], "192.0.2.44"),                            // an IPv4-mapped proxy is the IPv4 one
        ("2001:db8:9:9::1", [], [], "2001:db8:9:9::/64"),
        ("not-an-address", ["192.0.2.44"], [], "not-an-address"),
    ] as [(String, [String], [String], String)])
    func key(peer: String, xff: [String], forwarded: [String], key: String) {
        let hops = ClientAddresses.hops(xForwardedFor: xff, forwarded: forwarded)
        #expect(Self.proxies.key(peer: peer, hops: hops) == key)
    }

    @Test("no peer is unknown")
    func noPeer() {
        #expect(Self.proxies.key(peer: nil, hops: ["192.0.2.1"]) == "unknown")
    }

    @Test("CIDR blocks", arguments: [
        ("10.0.0.0/8", "10.255.1.2", true), ("10.0.0.0/8", "11.0.0.1", false), ("192.0.2.0/25", "192.0.2.127", true),
        ("192.0.2.0/25", "192.0.2.128", false), ("fd00::/8", "fd12::1", true), ("fd00::/8", "fe80::1", false),
        ("fd00::/8", "10.0.0.1", false), ("10.0.0.0/8", "fd00::1", false), ("::ffff:10.0.0.0/104", "10.0.0.9", true),
        ("0.0.0.0/0", "203.0.113.1", true), ("192.0.2.1", "192.0.2.1", true), ("192.0.2.1", "192.0.2.2", false),
    ])
    func blocks(block: String, address: String, inside: Bool) throws {
        let b = try #require(CIDRBlock(block))
        let a = try #require(IPAddress(address))
        #expect(b.contains(a) == inside)
    }

    @Test("a trusted-proxies entry that is not a CIDR block is named")
    func badEntries() throws {
        #expect(throws: ClientAddresses.BadEntry(entry: "not-an-address")) { try ClientAddresses.parse("10.0.0.0/8, not-an-address") }
        #expect(throws: ClientAddresses.BadEntry(entry: "10.0.0.0/33")) { try ClientAddresses.parse("10.0.0.0/33") }
        #expect(throws: ClientAddresses.BadEntry(entry: "fd00::/129")) { try ClientAddresses.parse("fd00::/129") }
        #expect(try ClientAddresses.parse("10.0.0.0/8 fd00::/8").trusted.count == 2)
        #expect(try ClientAddresses.parse(nil).trusted.isEmpty)
    }

    @Test("the /48 of a /64 limit key, and of nothing else")
    func prefix48() {
        #expect(ClientAddresses.prefix48(of: "2001:db8:1:2::/64") == "2001:db8:1::/48")
        #expect(ClientAddresses.prefix48(of: "0:0:0:0::/64") == "0:0:0::/48")
        #expect(ClientAddresses.prefix48(of: "address:2001:db8:1:2::/64") == nil)
        #expect(ClientAddresses.prefix48(of: "203.0.113.5") == nil)
    }
}
