import Contracts
import Foundation
import GoogleAPI
import NIOSSL
import ServiceKit

/// The billing service's settings (environment, with defaults), read and validated before
/// anything connects: the files they name (the App Store root, the extra CA certificates, the
/// Play service account) are read here too, so a missing or unreadable file stops the start at
/// once. The settings every service reads (log, bus, database, RPC, outbox, operations) are
/// ``ServiceRuntime``'s.
public struct BillingConfig: ServiceConfig {
    /// The trusted roots of App Store signed data, PEM: the content of the file
    /// `CHRONIR_APPLE_ROOT_CA_FILE` names (default: Apple Root CA - G3, built in).
    public var appleRootPEMs: [String]
    /// The app's bundle id that App Store transactions must carry (`CHRONIR_APPLE_BUNDLE_ID`,
    /// default `com.chronir.app`).
    public var appleBundleId: String
    /// Whether App Store Sandbox and Xcode transactions count as paid
    /// (`CHRONIR_APPLE_ALLOW_SANDBOX`, default false; a test deployment's setting).
    public var appleAllowSandbox: Bool
    /// Extra trusted CA certificates for the connections to Google (the certificates of the PEM
    /// file `CHRONIR_PUSH_CA_FILE` names; default none: the system's roots only).
    public var extraTrustRoots: [NIOSSLCertificate]?
    /// The Google Play service account: the JSON file `CHRONIR_PLAY_CREDENTIALS_FILE` names
    /// (default none: Google Play purchases are refused as not configured).
    public var playAccount: GoogleOAuth.ServiceAccount?
    /// The Google Play Developer API (`CHRONIR_PLAY_API_URL`, default
    /// `https://androidpublisher.googleapis.com`).
    public var playAPIURL: String
    /// The app's package name on Google Play (`CHRONIR_PLAY_PACKAGE`, default `com.chronir.app`).
    public var playPackage: String
    /// The grace period of an auto-renewing App Store subscription past its expiry, when Apple
    /// names no grace date of its own (`CHRONIR_APPLE_GRACE`, default 16 d).
    public var appleGrace: Duration
    /// The grace period of an auto-renewing Google Play subscription past its expiry, when
    /// Google names no expiry (`CHRONIR_GOOGLE_GRACE`, default 7 d).
    public var googleGrace: Duration
    /// The `?token=` of the Google Play real-time developer notifications push endpoint
    /// (`CHRONIR_PLAY_PUSH_TOKEN` or `CHRONIR_PLAY_PUSH_TOKEN_FILE`; default none: every push
    /// is refused).
    public var playPushToken: String?
    /// How often subscriptions whose expiry or grace passed with no store notification are
    /// moved on (`CHRONIR_ENTITLEMENT_SWEEP`, default 30 s).
    public var entitlementSweep: Duration
    /// The charity paid snoozes go to, shown with the ledger: `CHRONIR_CHARITY_NAME` (and
    /// `CHRONIR_CHARITY_ID`, `_DESCRIPTION`, `_CATEGORY`, `_URL`); none when no name is set.
    public var charity: Charity?

    public init(environment e: ServiceEnvironment) throws {
        if let file = e.optional("CHRONIR_APPLE_ROOT_CA_FILE") {
            guard let pem = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ServiceEnvironment.Invalid("CHRONIR_APPLE_ROOT_CA_FILE: cannot read \(file)")
            }
            appleRootPEMs = [pem]
        } else {
            appleRootPEMs = [AppleRootCA.g3]
        }
        appleBundleId = e.string("CHRONIR_APPLE_BUNDLE_ID", "com.chronir.app")
        appleAllowSandbox = try e.bool("CHRONIR_APPLE_ALLOW_SANDBOX", false)
        // The App Store root is checked now (a certificate that is unusable stops the start).
        _ = try Self.makeAppleVerifier(rootPEMs: appleRootPEMs, bundleId: appleBundleId)
        if let file = e.optional("CHRONIR_PUSH_CA_FILE") {
            extraTrustRoots = try NIOSSLCertificate.fromPEMFile(file)
        } else {
            extraTrustRoots = nil
        }
        if let file = e.optional("CHRONIR_PLAY_CREDENTIALS_FILE") {
            do {
                playAccount = try JSONDecoder().decode(GoogleOAuth.ServiceAccount.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                throw ServiceEnvironment.Invalid("CHRONIR_PLAY_CREDENTIALS_FILE: \(error)")
            }
        } else {
            playAccount = nil
        }
        playAPIURL = e.string("CHRONIR_PLAY_API_URL", "https://androidpublisher.googleapis.com")
        playPackage = e.string("CHRONIR_PLAY_PACKAGE", "com.chronir.app")
        appleGrace = try e.duration("CHRONIR_APPLE_GRACE", .seconds(16 * 86_400))
        googleGrace = try e.duration("CHRONIR_GOOGLE_GRACE", .seconds(7 * 86_400))
        playPushToken = try e.secret("CHRONIR_PLAY_PUSH_TOKEN")
        entitlementSweep = try e.duration("CHRONIR_ENTITLEMENT_SWEEP", .seconds(30))
        if let name = e.optional("CHRONIR_CHARITY_NAME") {
            let url = e.optional("CHRONIR_CHARITY_URL")
            if let url, URL(string: url)?.scheme != "https" { throw ServiceEnvironment.Invalid("CHRONIR_CHARITY_URL must be an https URL") }
            charity = Charity(id: e.string("CHRONIR_CHARITY_ID", name.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")),
                              name: name, description: e.optional("CHRONIR_CHARITY_DESCRIPTION"), category: e.optional("CHRONIR_CHARITY_CATEGORY"),
                              websiteURL: url)
        } else {
            charity = nil
        }
    }

    /// The verifier of App Store signed data, trusting ``appleRootPEMs`` and checking
    /// ``appleBundleId``.
    func makeAppleVerifier() throws -> AppleVerifier {
        try Self.makeAppleVerifier(rootPEMs: appleRootPEMs, bundleId: appleBundleId, allowSandbox: appleAllowSandbox)
    }

    private static func makeAppleVerifier(rootPEMs: [String], bundleId: String, allowSandbox: Bool = false) throws -> AppleVerifier {
        do {
            return try AppleVerifier(rootPEMs: rootPEMs, bundleId: bundleId, allowSandbox: allowSandbox)
        } catch {
            throw ServiceEnvironment.Invalid("the App Store root certificate is unusable: \(error)")
        }
    }
}
