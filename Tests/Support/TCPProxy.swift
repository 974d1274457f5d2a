import Foundation
import Synchronization

/// A TCP proxy on 127.0.0.1 in front of one upstream port, which a test can cut off and
/// restore: a network partition between a process and, say, its PostgreSQL, while both keep
/// running.
///
/// Cut, it is a black hole: bytes from either side are read and dropped, connections stay open
/// (nothing tells the process the peer is gone), and new connections are accepted but reach
/// nothing. Restored, every connection of before is closed (as a peer's reset would, once the
/// network returns) and new connections reach the upstream again.
public final class TCPProxy: Sendable {
    /// The port to connect to instead of the upstream's.
    public let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let state = Mutex<State>(State())

    private struct State {
        var cut = false
        var generation = 0
        var closed = false
        var accepted = 0
    }

    /// Connections accepted so far (a client that noticed a dead link and made a new one adds one).
    public var accepted: Int { state.withLock { $0.accepted } }

    public init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            Glibc.close(fd)
            throw TestSetupError("the proxy could not listen: errno \(errno)")
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        listener = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Cuts the network: from now on nothing passes either way.
    public func cut() { state.withLock { $0.cut = true } }

    /// Restores it: connections of before are closed, new ones pass.
    public func restore() {
        state.withLock {
            $0.cut = false
            $0.generation += 1
        }
    }

    /// Stops accepting and closes every connection.
    public func close() {
        state.withLock {
            $0.closed = true
            $0.generation += 1
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return addr
    }

    private func acceptLoop() {
        defer { Glibc.close(listener) }
        while !state.withLock({ $0.closed }) {
            var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let (cut, generation) = state.withLock { s in
                s.accepted += 1
                return (s.cut, s.generation)
            }
            let upstream = cut ? -1 : connectUpstream()
            if !cut && upstream < 0 {
                Glibc.close(client)
                continue
            }
            Thread.detachNewThread { [self] in pump(client, upstream, generation: generation) }
        }
    }

    private func connectUpstream() -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = Self.loopback(port: upstreamPort)
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if ok != 0 {
            Glibc.close(fd)
            return -1
        }
        return fd
    }

    /// Moves bytes between `client` and `upstream` (-1: a connection made while cut, which
    /// reaches nothing) until either side closes or the generation changes.
    private func pump(_ client: Int32, _ upstream: Int32, generation: Int) {
        defer {
            Glibc.close(client)
            if upstream >= 0 { Glibc.close(upstream) }
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
        if upstream >= 0 { fds.append(pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)) }
        while true {
            let (cut, current) = state.withLock { ($0.cut, $0.generation) }
            if current != generation { return }
            for i in fds.indices { fds[i].revents = 0 }
            guard poll(&fds, nfds_t(fds.count), 100) >= 0 else { return }
            for i in fds.indices where fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n <= 0 { return }
                if cut || upstream < 0 { continue }  // the black hole
                let target = fds[i].fd == client ? upstream : client
                var sent = 0
                while sent < n {
                    let w = buffer.withUnsafeBytes { write(target, $0.baseAddress! + sent, n - sent) }
                    if w <= 0 { return }
                    sent += w
                }
            }
        }
    }
}
