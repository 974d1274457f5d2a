import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// One HTTP exchange with an outside server, head and body, within an absolute deadline
/// (issue 74): AsyncHTTPClient's `execute(timeout:)` covers the response head only, and a body
/// trickled a byte at a time keeps a read going for as long as the server likes. Used for the
/// identity providers' keys, Google's token endpoint and the Play Developer API.
public enum BoundedFetch {
    /// A response read whole.
    public struct Answer: Sendable {
        public var status: UInt
        public var headers: HTTPHeaders
        public var body: ByteBuffer
    }

    /// The exchange did not end within its deadline (its request was cancelled).
    public struct TimedOut: Error, CustomStringConvertible {
        public let url: String
        public let limit: Duration
        public var description: String { "\(url) did not answer within \(limit)" }
    }

    /// Sends `request` and reads at most `maxBytes` of the answer, all within `within`; throws
    /// ``TimedOut`` past it, and what the client throws otherwise.
    public static func fetch(_ client: HTTPClient, _ request: HTTPClientRequest, within: Duration, maxBytes: Int) async throws -> Answer {
        try await withThrowingTaskGroup(of: Answer?.self) { group in
            group.addTask {
                do {
                    // A second past our own timer, which therefore answers first.
                    let head = within + .seconds(1)
                    let response = try await client.execute(request, timeout: .nanoseconds(Int64(head.components.seconds) * 1_000_000_000
                                                                                             + head.components.attoseconds / 1_000_000_000))
                    let body = try await response.body.collect(upTo: maxBytes)
                    return Answer(status: response.status.code, headers: response.headers, body: body)
                } catch let error as HTTPClientError where error == .deadlineExceeded {
                    return nil
                }
            }
            group.addTask {
                try? await Task.sleep(for: within)
                return nil
            }
            defer { group.cancelAll() }   // the other: the timer, or the exchange (its request cancelled)
            guard let answer = try await group.next() ?? nil else { throw TimedOut(url: request.url, limit: within) }
            return answer
        }
    }
}
