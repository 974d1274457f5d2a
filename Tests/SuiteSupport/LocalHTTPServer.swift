import Hummingbird
import Support
import Synchronization

/// A Hummingbird router served on 127.0.0.1 at a port the system picks, for the tests' stand-ins
/// of outside servers (identity providers, an OTLP collector).
final class LocalHTTPServer: Sendable {
    private let port = Mutex<Int?>(nil)
    private let task = Mutex<Task<Void, any Error>?>(nil)

    /// `http://127.0.0.1:<port>` once started.
    var baseURL: String { "http://127.0.0.1:\(port.withLock { $0 } ?? 0)" }

    /// Serves `router` and returns once it listens; `name` is for the error when it does not.
    func start(_ router: Router<BasicRequestContext>, name: String) async throws {
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in self.port.withLock { $0 = channel.localAddress?.port } })
        task.withLock { $0 = Task { try await app.runService() } }
        guard await eventually(timeout: .seconds(10), { self.port.withLock { $0 } != nil }) else {
            throw TestSetupError("the \(name) did not start")
        }
    }

    func stop() { task.withLock { $0?.cancel() } }
}
