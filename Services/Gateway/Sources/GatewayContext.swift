import Hummingbird
import NIOCore

/// The request context of the gateway's routes: Hummingbird's basic context plus the peer's
/// address (the key of per-address limits on sign-up and login).
struct GatewayContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The TCP peer (a reverse proxy in front of the gateway is one address for all).
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address as text, `unknown` when there is none (a Unix socket).
    var peer: String { remoteAddress?.ipAddress ?? "unknown" }
}
