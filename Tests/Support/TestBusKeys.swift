import Foundation
import Messaging
import ServiceKit
import ZMQ

/// The CurveZMQ keys of the test processes: every principal of the suite plus the test peers,
/// generated once per test process into a temporary directory. Services started by tests run
/// on a secured bus, as in production.
public enum TestBusKeys {
    /// The key directory (`public/`, `secret/`), for `CHRONIR_BUS_KEYS`.
    public static let directory: String = {
        let dir = NSTemporaryDirectory() + "chronir-test-keys-\(getpid())"
        do {
            try KeyFile.generate(in: dir, principals: BusKeys.principals + ["producer", "consumer"])
        } catch {
            fatalError("cannot generate test bus keys in \(dir): \(error)")
        }
        return dir
    }()

    /// The environment entry that gives a service these keys.
    public static var environment: [String: String] { ["CHRONIR_BUS_KEYS": directory] }

    /// A secured context of `principal` (its key from ``directory``).
    public static func context(_ principal: String) throws -> ZMQContext {
        let security = try BusSecurity.load(principal: principal, publicKeysDirectory: "\(directory)/public",
                                            secretKeyFile: KeyFile.secretPath(directory, principal))
        return try ZMQContext(security: security)
    }
}
