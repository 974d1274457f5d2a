import Crypto
import Foundation
import JWTKit
import SwiftASN1
import X509

/// A local certificate chain standing in for Apple's (root → intermediate → leaf, P-256) and a
/// signer of App Store JWS with the `x5c` header, for tests.
struct StoreSigner: Sendable {
    let rootPEM: String
    let chain: [String]
    let leafKey: P256.Signing.PrivateKey
    /// A chain from the same root whose leaf and intermediate lack Apple's markers, and its key.
    let unmarkedChain: [String]
    let unmarkedKey: P256.Signing.PrivateKey

    /// Apple's marker extensions (value DER NULL, not critical): the leaf's "receipt signing"
    /// and the intermediate's "WWDR" ones.
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]

    static func certificate(_ name: String, key: P256.Signing.PrivateKey, issuer: (DistinguishedName, P256.Signing.PrivateKey)?,
                            ca: Bool, notBefore: Date, notAfter: Date, marker: ASN1ObjectIdentifier? = nil) throws -> Certificate {
        let subject = try DistinguishedName { CommonName(name) }
        var extensions = try Certificate.Extensions {
            Critical(ca ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : BasicConstraints.notCertificateAuthority)
            Critical(ca ? KeyUsage(keyCertSign: true, cRLSign: true) : KeyUsage(digitalSignature: true))
        }
        if let marker { try extensions.append(Certificate.Extension(oid: marker, critical: false, value: [0x05, 0x00])) }
        return try Certificate(version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                               notValidBefore: notBefore, notValidAfter: notAfter, issuer: issuer?.0 ?? subject, subject: subject,
                               signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
                               issuerPrivateKey: .init(issuer?.1 ?? key))
    }

    /// A fresh chain; `leafExpired` makes the leaf's validity end yesterday; without `markers`
    /// the leaf and intermediate lack Apple's marker extensions (a certificate Apple issued for
    /// something else).
    init(rootName: String = "Test Root CA", leafExpired: Bool = false, markers: Bool = true) throws {
        let now = Date()
        let rootKey = P256.Signing.PrivateKey()
        let root = try Self.certificate(rootName, key: rootKey, issuer: nil, ca: true, notBefore: now - 86_400, notAfter: now + 86_400 * 30)
        let intKey = P256.Signing.PrivateKey()
        let intermediate = try Self.certificate("Test Intermediate", key: intKey, issuer: (root.subject, rootKey), ca: true,
                                                notBefore: now - 86_400, notAfter: now + 86_400 * 30,
                                                marker: markers ? Self.intermediateMarker : nil)
        leafKey = P256.Signing.PrivateKey()
        let leaf = try Self.certificate("Test Store Signer", key: leafKey, issuer: (intermediate.subject, intKey), ca: false,
                                        notBefore: now - 86_400 * 3, notAfter: leafExpired ? now - 86_400 : now + 86_400 * 30,
                                        marker: markers ? Self.leafMarker : nil)
        rootPEM = try root.serializeAsPEM().pemString
        let otherIntKey = P256.Signing.PrivateKey()
        let otherInt = try Self.certificate("Test Other Intermediate", key: otherIntKey, issuer: (root.subject, rootKey), ca: true,
                                            notBefore: now - 86_400, notAfter: now + 86_400 * 30)
        unmarkedKey = P256.Signing.PrivateKey()
        let otherLeaf = try Self.certificate("Test Other Signer", key: unmarkedKey, issuer: (otherInt.subject, otherIntKey), ca: false,
                                             notBefore: now - 86_400, notAfter: now + 86_400 * 30)
        unmarkedChain = [try otherLeaf.serializeAsPEM().pemString, try otherInt.serializeAsPEM().pemString, rootPEM]
        // jwt-kit takes the x5c chain as PEM and writes it as base64 DER, as Apple does.
        chain = [try leaf.serializeAsPEM().pemString, try intermediate.serializeAsPEM().pemString, rootPEM]
    }

    /// Signs `payload` with a valid chain from the same root that is not the App Store's (no
    /// marker extensions): what another certificate Apple issued could sign.
    func signUnmarked(_ payload: some JWTPayload) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: unmarkedKey.pemRepresentation))
        var header = JWTHeader()
        header.x5c = unmarkedChain
        return try await keys.sign(payload, header: header)
    }

    /// Signs `payload` as the store would; `key` overrides the leaf's key (a forgery).
    func sign(_ payload: some JWTPayload, key: P256.Signing.PrivateKey? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: (key ?? leafKey).pemRepresentation))
        var header = JWTHeader()
        header.x5c = chain
        return try await keys.sign(payload, header: header)
    }
}

/// A StoreKit 2 transaction as App Store signs it (dates in milliseconds).
struct TestTransaction: JWTPayload {
    var transactionId: String
    var originalTransactionId: String
    var bundleId: String = "com.chronir.app"
    var productId: String
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64
    var signedDate: Int64
    var type: String = "Auto-Renewable Subscription"
    var environment: String = "Production"
    /// The buyer's uid, as the app sets it at purchase (absent: not set).
    var appAccountToken: String? = nil
    func verify(using algorithm: some JWTAlgorithm) throws {}

    init(original: String, productId: String, expires: Date, signed: Date = Date(), bundleId: String = "com.chronir.app") {
        let ms = { (d: Date) in Int64(d.timeIntervalSince1970 * 1000) }
        transactionId = UUID().uuidString
        originalTransactionId = original
        self.productId = productId
        self.bundleId = bundleId
        purchaseDate = ms(signed)
        originalPurchaseDate = ms(signed)
        expiresDate = ms(expires)
        signedDate = ms(signed)
    }
}

/// An App Store Server Notification V2 body.
struct TestNotification: JWTPayload {
    struct Body: Codable, Sendable {
        var bundleId: String
        var environment: String
        var signedTransactionInfo: String
    }
    var notificationType: String
    var subtype: String?
    var notificationUUID: String
    var data: Body
    var signedDate: Int64
    var version: String = "2.0"
    func verify(using algorithm: some JWTAlgorithm) throws {}

    init(type: String, subtype: String? = nil, transaction: String, signed: Date, id: String = UUID().uuidString) {
        notificationType = type
        self.subtype = subtype
        notificationUUID = id
        data = Body(bundleId: "com.chronir.app", environment: "Production", signedTransactionInfo: transaction)
        signedDate = Int64(signed.timeIntervalSince1970 * 1000)
    }
}

extension StoreSigner {
    /// The root certificate written to a temporary PEM file (`CHRONIR_APPLE_ROOT_CA_FILE`).
    func rootFile() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-root-\(UUID().uuidString).pem").path
        try rootPEM.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
