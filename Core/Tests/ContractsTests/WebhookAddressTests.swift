import Contracts
import Testing

/// The rule that keeps webhook URLs from reaching inside the deployment (`WebhookAddress`):
/// which IP addresses are internal, in every notation, and which URLs registration refuses.
@Suite("Webhook addresses")
struct WebhookAddressTests {
    /// Internal addresses, by range, in the notations an attacker would try.
    static let internalAddresses: [String] = [
        // Loopback 127/8 and ::1, in inet_aton's decimal, octal, hexadecimal and short forms.
        "127.0.0.1", "127.255.255.254", "127.1", "2130706433", "0x7f.1", "0x7f000001", "017700000001", "0177.0.0.1",
        "::1", "[::1]", "0:0:0:0:0:0:0:1",
        // Unspecified 0.0.0.0/8 and ::.
        "0.0.0.0", "0", "0.1.2.3", "::", "[::]",
        // Private.
        "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255",
        // Link-local (the cloud metadata endpoint), with and without a zone id.
        "169.254.169.254", "169.254.0.1", "fe80::1", "fe80::1%eth0", "[fe80::1%eth0]", "febf::1",
        // Unique-local fc00::/7 and site-local fec0::/10.
        "fc00::1", "fd12:3456:789a::1", "fec0::1", "feff::1",
        // Multicast.
        "224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1",
        // Carrier-grade NAT 100.64/10.
        "100.64.0.1", "100.127.255.254",
        // Reserved 240/4 and broadcast.
        "240.0.0.1", "255.255.255.255",
        // IETF protocol assignments, benchmarking, documentation.
        "192.0.0.8", "198.18.0.1", "198.19.255.255", "192.0.2.1", "198.51.100.1", "203.0.113.1", "2001:db8::1",
        // IPv6 carrying an internal IPv4 address: mapped, compatible, translated, NAT64, 6to4, Teredo.
        "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "::ffff:7f00:1", "::ffff:10.1.2.3", "::ffff:169.254.169.254",
        "::127.0.0.1", "::10.0.0.1", "::ffff:0:127.0.0.1",
        "64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b::169.254.169.254",
        "2002:7f00:1::1", "2002:a00:1::", "2001:0:4136:e378:8000:63bf:80ff:fffe",
        // Outside global unicast 2000::/3: discard-only, local-use NAT64.
        "100::1", "64:ff9b:1::1",
    ]

    /// Public addresses, including the neighbours of every internal range.
    static let publicAddresses: [String] = [
        "8.8.8.8", "1.1.1.1", "93.184.216.34", "134744072", "11.0.0.1", "9.255.255.255",
        "172.15.255.255", "172.32.0.1", "192.167.255.255", "192.169.0.1", "169.253.255.255", "169.255.0.1",
        "100.63.255.255", "100.128.0.1", "198.17.255.255", "198.20.0.1", "223.255.255.255", "1.0.0.0",
        "2606:4700::1111", "[2606:4700::1111]", "2001:4860:4860::8888", "2a00:1450:4001::200e",
        "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1",
    ]

    @Test("internal addresses are internal, in every notation", arguments: WebhookAddressTests.internalAddresses)
    func internalAddress(_ address: String) {
        #expect(WebhookAddress.isInternal(address), "\(address)")
        #expect(WebhookAddress.ipBytes(address) != nil, "\(address) is an IP address")
    }

    @Test("public addresses are not internal", arguments: WebhookAddressTests.publicAddresses)
    func publicAddress(_ address: String) {
        #expect(!WebhookAddress.isInternal(address), "\(address)")
        #expect(WebhookAddress.ipBytes(address) != nil, "\(address) is an IP address")
    }

    @Test("text that is not an IP address is not one (a host name is judged by what it resolves to)")
    func notAnAddress() {
        for text in ["hooks.example.com", "localhost", "", "1.2.3.4.5", "256.256.256.256", "::g", "0x7g.1", "example"] {
            #expect(WebhookAddress.ipBytes(text) == nil, "\(text)")
            #expect(!WebhookAddress.isInternal(text), "\(text)")
        }
    }

    @Test("raw bytes: 4 and 16 judged as addresses, any other length internal")
    func rawBytes() {
        #expect(WebhookAddress.isInternal(bytes: [127, 0, 0, 1]))
        #expect(!WebhookAddress.isInternal(bytes: [8, 8, 8, 8]))
        #expect(WebhookAddress.isInternal(bytes: [UInt8](repeating: 0, count: 15) + [1]))
        #expect(!WebhookAddress.isInternal(bytes: [0x26, 0x06, 0x47, 0x00] + [UInt8](repeating: 0, count: 10) + [0x11, 0x11]))
        #expect(WebhookAddress.isInternal(bytes: []))
        #expect(WebhookAddress.isInternal(bytes: [1, 2, 3]))
    }

    /// URLs registration refuses, each for one reason.
    static let refusedURLs: [String] = [
        "http://localhost/", "https://localhost:8443/x", "http://LOCALHOST./x", "https://api.localhost/", "https://a.b.LocalHost/",
        "http://127.1/", "http://127.0.0.1:8080/x", "http://[::ffff:127.0.0.1]/", "http://0x7f000001/", "http://2130706433/",
        "http://0x7f.1/", "http://017700000001/", "https://[::1]/", "https://[::]/", "http://0.0.0.0:8080/", "http://0/",
        "https://169.254.169.254/latest/meta-data", "https://169.254.169.254/latest/meta-data/", "https://[fe80::1]/",
        "https://10.0.0.1/", "https://172.20.1.1:8443/", "https://192.168.1.1/", "https://100.64.0.1/", "https://[fd00::1]:8443/",
        "https://224.0.0.1/", "https://255.255.255.255/", "https://[64:ff9b::a00:1]/",
        "https://x.example:22", "https://x.example:22/", "http://x.example:25/", "https://x.example:80/", "https://x.example:0/",
        "https://x.example:1023/",
        "https://user:pw@x.example", "https://user@x.example/", "https://user:pw@hooks.example.com:8443/x",
        "ftp://x.example/", "file:///etc/passwd", "gopher://x.example:70/", "https:///x", "not a url",
    ]

    @Test("registration refuses URLs that reach inside, with a message naming webhookUrl", arguments: WebhookAddressTests.refusedURLs)
    func refused(_ url: String) {
        let problem = WebhookAddress.registrationProblem(url)
        #expect(problem != nil, "\(url) was accepted")
        #expect(problem?.contains("webhookUrl") == true, "\(url): \(problem ?? "-")")
    }

    @Test("registration accepts public http(s) URLs on default ports, 443 or 1024 and up")
    func accepted() {
        for url in ["https://hooks.example.com/x", "https://hooks.example.com:8443/x", "http://hooks.example.com/x",
                    "http://hooks.example.com:80/x", "https://hooks.example.com:443/x", "http://hooks.example.com:443/x",
                    "https://hooks.example.com:1024/x", "https://hooks.example.com:65535/x", "HTTPS://Hooks.Example.com/X",
                    "https://8.8.8.8/hook", "https://[2606:4700::1111]/hook", "https://hooks.example.com/x?to=a@b.example",
                    "https://localhost.example.com/x", "https://my-localhost/x", "https://hooks.example.com./x"] {
            #expect(WebhookAddress.registrationProblem(url) == nil, "\(url): \(WebhookAddress.registrationProblem(url) ?? "")")
        }
    }

    @Test("each refusal says why")
    func messages() {
        #expect(WebhookAddress.registrationProblem("http://localhost/")?.contains("localhost") == true)
        #expect(WebhookAddress.registrationProblem("http://10.1.2.3/")?.contains("internal address") == true)
        #expect(WebhookAddress.registrationProblem("https://x.example:22/")?.contains("port") == true)
        #expect(WebhookAddress.registrationProblem("https://u:p@x.example/")?.contains("password") == true)
        #expect(WebhookAddress.registrationProblem("ftp://x.example/")?.contains("http(s)") == true)
    }
}
