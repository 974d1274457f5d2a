import Crypto
import Foundation
import Wire

/// AWS Signature Version 4 for S3 requests signed in the `Authorization` header
/// (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html).
/// Checked against the worked examples of that page in the unit tests.
struct SigV4: Sendable {
    let accessKeyID: String
    let secretAccessKey: String
    let region: String
    var service = "s3"

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256` and
    /// `Authorization`. `headers` are the request's other headers to sign (`host` at least);
    /// `path` is the URI path before encoding; `query` the query parameters.
    func sign(method: String, path: String, query: [(String, String)] = [], headers: [(String, String)],
              payloadSHA256: String, date: Date) -> [(String, String)] {
        let amzDate = Self.stamp(date, "yyyyMMdd'T'HHmmss'Z'")
        let day = String(amzDate.prefix(8))
        var all = headers.map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }
        all.append(("x-amz-content-sha256", payloadSHA256))
        all.append(("x-amz-date", amzDate))
        all.sort { $0.0 < $1.0 }
        let signedHeaders = all.map(\.0).joined(separator: ";")
        let encodedQuery: [(String, String)] = query.map { (Self.encode($0.0, slash: true), Self.encode($0.1, slash: true)) }
        let sortedQuery = encodedQuery.sorted { (a: (String, String), b: (String, String)) -> Bool in a.0 == b.0 ? a.1 < b.1 : a.0 < b.0 }
        let canonicalQuery = sortedQuery.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let canonicalHeaders = all.map { "\($0.0):\($0.1)\n" }.joined()
        let parts: [String] = [method, Self.encode(path, slash: false), canonicalQuery, canonicalHeaders, signedHeaders, payloadSHA256]
        let canonical = parts.joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let toSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonical.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(toSign.utf8), using: key))
        return [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadSHA256),
                ("Authorization", "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)")]
    }

    /// The SHA-256 of a payload in lower-case hex.
    static func payloadHash(_ data: Data) -> String { hex(SHA256.hash(data: data)) }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        Hex.lowercase(bytes)
    }

    /// URI-encoding as SigV4 wants it: everything but `A-Z a-z 0-9 - _ . ~` as `%XX`, and `/`
    /// kept in paths (`slash: false`) but encoded in query parts.
    static func encode(_ text: String, slash: Bool) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            case UInt8(ascii: "/") where !slash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    private static func stamp(_ date: Date, _ format: String) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = format
        return f.string(from: date)
    }
}
