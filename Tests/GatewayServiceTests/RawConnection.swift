import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare TCP connection to the gateway on 127.0.0.1, for tests that behave as no HTTP client
/// library lets them: a request head sent in pieces or never finished, a connection held open
/// without a request. The blocking socket calls run off the test's task (on a Dispatch thread),
/// each with a bounded wait.
final class RawConnection: Sendable {
    /// What one read saw.
    enum Read: Sendable, Equatable {
        case data(String)
        /// The peer closed the connection (end of stream or reset).
        case closed
        /// Nothing arrived in time; the connection is still open.
        case timeout
    }

    struct Failure: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call) failed: errno \(code)" }
    }

    private let fd: Int32
    private let released = Atomic<Bool>(false)

    /// Connects to 127.0.0.1:`port`.
    init(port: Int) throws {
        fd = try rawConnect(port: port)
    }

    deinit { close() }

    /// Sends `text`; false when the connection is gone (the peer closed or reset it).
    @discardableResult
    func send(_ text: String) -> Bool {
        rawSend(fd, Array(text.utf8))
    }

    /// Waits up to `timeout` for bytes or the end of the connection.
    func read(timeout: Duration) async -> Read {
        let fd = self.fd
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: rawRead(fd, milliseconds: milliseconds)) }
        }
    }

    /// Reads until the connection ends or `timeout` passes; whether it ended (what arrived is dropped).
    func waitForClose(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch await read(timeout: min(.milliseconds(250), ContinuousClock.now.duration(to: deadline))) {
            case .closed: return true
            case .data, .timeout: continue
            }
        }
        return false
    }

    /// Reads for `duration` (or until the connection ends): everything that arrived, and whether it ended.
    func collect(for duration: Duration) async -> (text: String, ended: Bool) {
        let deadline = ContinuousClock.now + duration
        var text = ""
        while ContinuousClock.now < deadline {
            switch await read(timeout: min(.milliseconds(250), ContinuousClock.now.duration(to: deadline))) {
            case .data(let chunk): text += chunk
            case .closed: return (text, true)
            case .timeout: continue
            }
        }
        return (text, false)
    }

    /// Closes the socket (again is harmless).
    func close() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        rawClose(fd)
    }
}

// The system calls, outside the class: its methods would shadow `send`, `read` and `close`.

private func rawConnect(port: Int) throws -> Int32 {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw RawConnection.Failure(call: "socket", code: errno) }
    #if canImport(Darwin)
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
    var address = sockaddr_in()
    #if canImport(Darwin)
    address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
    #endif
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        let code = errno
        rawClose(fd)
        throw RawConnection.Failure(call: "connect", code: code)
    }
    return fd
}

private func rawSend(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    #if canImport(Darwin)
    let flags: Int32 = 0
    #else
    let flags = Int32(MSG_NOSIGNAL)
    #endif
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, flags) }
        if n < 0, errno == EINTR { continue }
        guard n > 0 else { return false }
        offset += n
    }
    return true
}

private func rawRead(_ fd: Int32, milliseconds: Int32) -> RawConnection.Read {
    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let polled = poll(&ready, 1, max(0, milliseconds))
    if polled == 0 { return .timeout }
    if polled < 0 { return errno == EINTR ? .timeout : .closed }
    var buffer = [UInt8](repeating: 0, count: 16 << 10)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if n > 0 { return .data(String(decoding: buffer[..<n], as: UTF8.self)) }
    if n < 0, errno == EINTR || errno == EAGAIN { return .timeout }
    return .closed
}

private func rawClose(_ fd: Int32) {
    _ = close(fd)
}
