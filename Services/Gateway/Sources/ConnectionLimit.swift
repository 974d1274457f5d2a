import GatewayCore
import Messaging
import NIOCore
import Synchronization

/// The cap on HTTP connections one peer address holds open at once
/// (`CHRONIR_CONNECTIONS_PER_ADDRESS`; 0 = no cap). A connection past it is closed as soon as it
/// is accepted, before anything is read from it, and counted in
/// `chronir_gateway_connections_refused_total`.
///
/// Enforced by a handler in each connection's pipeline (``handlers()``, Hummingbird's
/// `HTTP1Channel.Configuration.additionalChannelHandlers`). A trusted proxy
/// (`CHRONIR_TRUSTED_PROXIES`) carries many clients' connections and is not capped; other
/// IPv6 peers are counted by their /64.
final class ConnectionLimit: Sendable {
    /// The most connections one address may hold (0: any number).
    let perAddress: Int
    private let held: Mutex<SlotCounts>
    private let telemetry: Telemetry
    private let addresses: ClientAddresses

    init(perAddress: Int, telemetry: Telemetry, addresses: ClientAddresses = ClientAddresses(trusted: [])) {
        self.perAddress = perAddress
        self.held = Mutex(SlotCounts(cap: perAddress))
        self.telemetry = telemetry
        self.addresses = addresses
    }

    /// The key `peer` is counted under: nil for a trusted proxy (not capped).
    func key(_ peer: String?) -> String? {
        guard let peer, let address = IPAddress(peer) else { return peer ?? "unknown" }
        return addresses.isTrusted(address) ? nil : address.limitKey
    }

    /// The handlers for a new connection's pipeline: none when there is no cap.
    func handlers() -> [any RemovableChannelHandler] {
        perAddress > 0 ? [ConnectionLimitHandler(limit: self)] : []
    }

    /// Counts a connection of `address`; false (not counted) when the address holds the cap.
    func admit(_ address: String) -> Bool {
        let admitted = held.withLock { $0.take(address) }
        if !admitted { telemetry.counter("chronir_gateway_connections_refused_total").increment() }
        return admitted
    }

    /// Uncounts a connection ``admit(_:)`` counted.
    func release(_ address: String) {
        held.withLock { $0.give(address) }
    }

    /// The connections `address` holds now.
    func count(_ address: String) -> Int { held.withLock { $0.count(address) } }
}

/// Counts its connection with a ``ConnectionLimit`` once the connection is active and closes it
/// when its address holds the cap already; uncounts it when the connection ends. It reads
/// nothing: what the HTTP decoder passes on goes through unchanged.
final class ConnectionLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let limit: ConnectionLimit
    /// The address this connection was counted under (nil: not counted, or released).
    private var counted: String?
    private var decided = false

    init(limit: ConnectionLimit) {
        self.limit = limit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Accepted connections become active after their pipeline is set up; should one be
        // active already, the close waits until the setup that is adding this handler is done.
        if context.channel.isActive { decide(context, closeLater: true) }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        decide(context, closeLater: false)
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        release()
    }

    private func decide(_ context: ChannelHandlerContext, closeLater: Bool) {
        guard !decided else { return }
        decided = true
        guard let address = limit.key(context.channel.remoteAddress?.ipAddress) else { return }
        if limit.admit(address) {
            counted = address
        } else if closeLater {
            let channel = context.channel
            context.eventLoop.execute { channel.close(promise: nil) }
        } else {
            context.close(promise: nil)
        }
    }

    private func release() {
        guard let address = counted else { return }
        counted = nil
        limit.release(address)
    }
}

@available(*, unavailable)
extension ConnectionLimitHandler: Sendable {}
