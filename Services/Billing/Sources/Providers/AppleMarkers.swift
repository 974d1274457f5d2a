import Foundation
import Messaging
import SwiftASN1
import X509

/// Apple's marker extensions on the App Store signing chain: a chain that verifies up to Apple
/// Root CA - G3 is App Store data only when its leaf carries the "Mac App Store Receipt Signing"
/// marker and its intermediate the "Apple Worldwide Developer Relations" one (any other
/// certificate Apple issues under the same root would otherwise sign "transactions").
enum AppleMarkers {
    /// `1.2.840.113635.100.6.11.1` on the leaf.
    static let leaf: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    /// `1.2.840.113635.100.6.2.1` on the intermediate.
    static let intermediate: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]

    /// Throws `CA027` unless the JWS's `x5c` leaf and intermediate carry their markers. Call it
    /// after the signature and chain were verified (it reads the header, it does not verify).
    static func check(_ jws: String, what: String) throws {
        let chain: [Certificate]
        do {
            chain = try certificates(jws)
        } catch {
            throw ServiceError(.receiptInvalid, "\(what) has no readable x5c chain")
        }
        guard chain.count >= 2 else { throw ServiceError(.receiptInvalid, "\(what) is not signed by an App Store chain (x5c too short)") }
        guard chain[0].extensions[oid: leaf] != nil else {
            throw ServiceError(.receiptInvalid, "\(what) is not signed by an App Store certificate (the leaf lacks \(leaf))")
        }
        guard chain[1].extensions[oid: intermediate] != nil else {
            throw ServiceError(.receiptInvalid, "\(what) is not signed through Apple's WWDR intermediate (it lacks \(intermediate))")
        }
    }

    /// The certificates of the JWS header's `x5c` (base64 DER), leaf first.
    static func certificates(_ jws: String) throws -> [Certificate] {
        guard let part = jws.split(separator: ".", omittingEmptySubsequences: false).first,
              let header = Data(base64URL: String(part)),
              let json = try JSONSerialization.jsonObject(with: header) as? [String: Any],
              let x5c = json["x5c"] as? [String] else {
            throw ServiceError(.receiptInvalid, "no x5c header")
        }
        return try x5c.map { b64 in
            guard let der = Data(base64Encoded: b64) else { throw ServiceError(.receiptInvalid, "x5c entry is not base64") }
            return try Certificate(derEncoded: Array(der))
        }
    }
}

