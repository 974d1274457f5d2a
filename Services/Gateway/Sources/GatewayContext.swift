import Hummingbird
import NIOCore

/// The request context of the gateway's routes: Hummingbird's basic context plus the TCP peer's
/// address (``Gateway/source(_:_:)`` turns it into the client per-address limits count).
struct GatewayContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The TCP peer (a reverse proxy in front of the gateway, or the client itself).
    let remoteAddress: SocketAddress?
    /// The connection (streamed answers close it when their client stops reading:
    /// ``WriteProgress``).
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }
}
