import Foundation
import Testing
import Wire

/// The one base64url of the suite (tokens, codes, JWS parts, JWK members) and its random bytes.
@Suite("Base64url and secure random bytes")
struct Base64URLTests {
    @Test("encodes URL-safe, unpadded; decodes it padded or not; refuses standard base64's alphabet")
    func roundTrip() throws {
        // 0xfb 0xff → standard "+/8=", URL-safe "-_8".
        let bytes = Data([0xfb, 0xff])
        #expect(bytes.base64EncodedString() == "+/8=")
        #expect(bytes.base64URLEncodedString() == "-_8")
        #expect(Data(base64URL: "-_8") == bytes)
        #expect(Data(base64URL: "-_8=") == bytes)
        #expect(Data(base64URL: "+/8=") == nil)
        #expect(Data(base64URL: "not base64!") == nil)
        for count in 0..<40 {
            let data = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            let text = data.base64URLEncodedString()
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Data(base64URL: text) == data, "\(count) bytes")
        }
    }

    @Test("random bytes: the length asked; a 16-byte code is 22 characters; two draws differ")
    func random() {
        #expect(Data.secureRandom(count: 0).isEmpty)
        #expect(Data.secureRandom(count: 32).count == 32)
        #expect(Data.secureRandom(count: 16).base64URLEncodedString().count == 22)
        #expect(Data.secureRandom(count: 32) != Data.secureRandom(count: 32))
    }
}
