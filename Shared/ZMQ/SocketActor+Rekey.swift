import CZMQ
import Foundation

/// The CURVE keys a socket applied and the endpoints it connected, kept by its thread.
struct CurveState {
    let role: CurveRole
    /// This process's secret key as applied (nil on a plain bus).
    var secretKey: String?
    /// The server's public key a client socket applied.
    var serverKey: String?
    /// The endpoints connected now, in order.
    var connected: [String]

    init(role: CurveRole, security: BusSecurity?, connected: [String]) {
        self.role = role
        self.secretKey = security?.keys.secretKey
        if case .client(let server) = role { self.serverKey = security?.publicKey(of: server) }
        self.connected = connected
    }
}

extension SocketActor {
    /// Applies reloaded bus keys on the socket thread when they change this socket's:
    /// a server whose process got a new key pair binds its endpoints again with it (libzmq copies
    /// the key into the listener at bind time; the connections it had are dropped and clients
    /// reconnect), and a client whose server's key or own key pair changed connects again with
    /// the new keys (messages queued on the old connection are dropped: a caller's request
    /// times out, or is retried under its idempotency key). Failures are counted as errors.
    func rekey(_ security: BusSecurity) {
        var state = curveStateForRekey
        switch state.role {
        case .none:
            return
        case .server:
            guard security.keys.secretKey != state.secretKey else { return }
            do {
                try socketForRekey.applyCurve(.server, security: security)
                for endpoint in boundEndpoints {
                    try socketForRekey.unbind(endpoint)
                    try bindAgain(endpoint)
                }
            } catch {
                stats.errors.add(1, ordering: .relaxed)
            }
            state.secretKey = security.keys.secretKey
        case .client(let server):
            let serverKey = security.publicKey(of: server)
            guard serverKey != state.serverKey || security.keys.secretKey != state.secretKey else { return }
            do {
                try socketForRekey.applyCurve(state.role, security: security)
                for endpoint in state.connected {
                    try? socketForRekey.disconnect(endpoint)
                    try socketForRekey.connect(endpoint)
                }
            } catch {
                stats.errors.add(1, ordering: .relaxed)
            }
            state.serverKey = serverKey
            state.secretKey = security.keys.secretKey
        }
        curveStateForRekey = state
    }

    /// Binds `endpoint` again after an unbind: libzmq closes the old listener on its I/O thread,
    /// so the port can stay taken for a moment.
    private func bindAgain(_ endpoint: String) throws {
        var attempt = 0
        while true {
            do {
                _ = try socketForRekey.bind(endpoint)
                return
            } catch let error as ZMQError where error.code == EADDRINUSE && attempt < 100 {
                attempt += 1
                usleep(10_000)
            }
        }
    }
}
