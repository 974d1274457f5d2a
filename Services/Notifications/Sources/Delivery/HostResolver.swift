import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Host names to IP addresses with the system resolver (`getaddrinfo`, what the HTTP client
/// itself would use), on a dispatch queue: a lookup blocks a thread of its own, never the
/// cooperative pool, and is given up after a timeout.
enum HostResolver {
    /// One address of a host.
    struct Address: Sendable, Hashable, CustomStringConvertible {
        /// 4 bytes (IPv4) or 16 (IPv6), network order.
        var bytes: [UInt8]

        /// The address as text every IP parser reads: dotted IPv4, or eight IPv6 groups.
        var description: String {
            if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
            return stride(from: 0, to: bytes.count, by: 2)
                .map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                .joined(separator: ":")
        }
    }

    /// A name that did not resolve, or did not in time.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Every address of `host` (A and AAAA, in the resolver's order, without repeats). Throws
    /// ``Failure`` when the name does not resolve or takes longer than `timeout`.
    static func resolve(_ host: String, timeout: DispatchTimeInterval = .seconds(5)) async throws -> [Address] {
        let once = Once()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Address], any Error>) in
            once.start(continuation)
            DispatchQueue.global(qos: .utility).async {
                once.finish(Result { try HostResolver.lookup(host) })
            }
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + timeout) {
                once.finish(.failure(HostResolver.Failure(description: "resolving \(host) took too long")))
            }
        }
    }

    /// `getaddrinfo` itself (blocking).
    static func lookup(_ host: String) throws -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            let why = status == 0 ? "no address" : String(cString: gai_strerror(status))
            throw Failure(description: "cannot resolve \(host): \(why)")
        }
        defer { freeaddrinfo(first) }
        var out: [Address] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            guard let sa = entry.pointee.ai_addr else { continue }
            let raw = UnsafeRawPointer(sa)
            let address: Address
            switch Int32(entry.pointee.ai_family) {
            case AF_INET:
                guard Int(entry.pointee.ai_addrlen) >= MemoryLayout<sockaddr_in>.size else { continue }
                let ipv4 = raw.loadUnaligned(as: sockaddr_in.self)
                address = Address(bytes: withUnsafeBytes(of: ipv4.sin_addr) { Array($0) })
            case AF_INET6:
                guard Int(entry.pointee.ai_addrlen) >= MemoryLayout<sockaddr_in6>.size else { continue }
                let ipv6 = raw.loadUnaligned(as: sockaddr_in6.self)
                address = Address(bytes: withUnsafeBytes(of: ipv6.sin6_addr) { Array($0) })
            default:
                continue
            }
            if !out.contains(address) { out.append(address) }
        }
        guard !out.isEmpty else { throw Failure(description: "cannot resolve \(host): no IPv4 or IPv6 address") }
        return out
    }

    /// Resumes a continuation once: with the lookup's answer or the timeout, whichever is first.
    private final class Once: Sendable {
        private let continuation = Mutex<CheckedContinuation<[Address], any Error>?>(nil)

        func start(_ c: CheckedContinuation<[Address], any Error>) {
            continuation.withLock { $0 = c }
        }

        func finish(_ result: Result<[Address], any Error>) {
            let waiting = continuation.withLock { held in
                let c = held
                held = nil
                return c
            }
            waiting?.resume(with: result)
        }
    }
}
