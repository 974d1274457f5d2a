import Foundation
import Hummingbird
import NIOCore
import Support
@testable import SuiteSupport
import Testing

/// Issue 74: an outside server that answers slowly on purpose holds nothing for longer than its
/// bound — here the identity provider's key set (JWKS), whose body trickles a byte at a time.
@Suite("Slow key server: the JWKS fetch is bounded head to body")
struct SlowKeyServerTests {
    @Test("a JWKS whose body trickles ends the sign-in with 503 CA022 (keys unavailable) within its 10 s bound, instead of holding it until the gateway gives up (504)")
    func trickledKeys() async throws {
        let idp = try IdentityProviderServer()
        try await idp.start()
        defer { idp.stop() }
        let router = Router()
        router.get("/keys") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json", .contentLength: "100000"],
                     body: ResponseBody { writer in
                         for _ in 0..<100_000 {
                             try await writer.write(ByteBuffer(string: " "))
                             try await Task.sleep(for: .milliseconds(300))
                         }
                         try await writer.finish(nil)
                     })
        }
        let slow = LocalHTTPServer()
        try await slow.start(router, name: "slow key server")
        defer { slow.stop() }
        var accounts = idp.environment()
        accounts["CHRONIR_GOOGLE_JWKS_URL"] = "\(slow.baseURL)/keys"
        try await withTestSuite(label: "slowkeys", start: { try $0.startAccountsAndGateway(accounts: accounts, gateway: ["CHRONIR_UPSTREAM_TIMEOUT": "20s"]) }) { s in
            let started = ContinuousClock.now
            let r = try await s.request(.POST, "/v1/auth/google", json: ["idToken": try await idp.token("google", sub: "g-slow", email: "slow@gmail.example.com")])
            let took = started.duration(to: .now)
            #expect(r.status == 503 && r.code == "CA022", "\(r.status) \(r.text)")
            #expect(r.text.contains("signing keys"), "\(r.text)")
            #expect(took < .seconds(13), "answered after \(took)")
            // Apple's keys come from the honest server: unaffected.
            let apple = try await s.request(.POST, "/v1/auth/apple", json: ["identityToken": try await idp.token("apple", sub: "a-fast", email: nil, nonce: "n"), "nonce": "n"])
            #expect(apple.status == 200, "\(apple.text)")
        }
    }
}
