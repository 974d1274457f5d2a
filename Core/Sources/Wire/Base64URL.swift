import Foundation

extension Data {
    /// URL-safe base64 without padding (RFC 4648 §5): JWS parts, JWK members, and the tokens that
    /// mail links, sessions and invitation codes carry. The one spelling of it in the suite.
    public func base64URLEncodedString() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes URL-safe base64, padded or not (a JWS part has no padding); nil when `base64URL`
    /// is not that (standard base64's `+` and `/` included: they are not in its alphabet).
    public init?(base64URL: String) {
        guard !base64URL.contains("+"), !base64URL.contains("/") else { return nil }
        var s = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        self.init(base64Encoded: s)
    }

    /// `count` bytes from the system's secure generator (`getrandom` on Linux): what a token or a
    /// code that must not be guessed is made of.
    public static func secureRandom(count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
