import Foundation
import Support

/// A self-signed certificate for `localhost` and 127.0.0.1 (EC P-256, two days), made by the
/// openssl command-line tool, for the tests' local TLS servers; clients trust it as a CA.
struct TestCertificate: Sendable {
    let certFile: String
    let keyFile: String

    /// Writes `cert.pem` and `key.pem` into `dir`.
    init(in dir: URL) throws {
        certFile = dir.appendingPathComponent("cert.pem").path
        keyFile = dir.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-keyout", keyFile, "-out", certFile, "-days", "2", "-subj", "/CN=localhost",
                             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]
        openssl.standardError = FileHandle.nullDevice
        openssl.standardOutput = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw TestSetupError("openssl could not make a certificate") }
    }
}
