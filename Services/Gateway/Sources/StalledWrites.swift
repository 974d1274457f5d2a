import HTTPTypes
import Hummingbird
import Messaging
import NIOCore
import Synchronization

/// Closes a streamed answer whose client stopped reading (issue 74). A response write waits
/// while the client's TCP window is shut; the HTTP idle timeout is paused while an answer is
/// being written, so a live stream or an export whose client reads nothing would hold its
/// connection — and its place among its address's connections and its account's live streams
/// — for as long as TCP lets it. Streams write at least every `CHRONIR_SSE_PING`; one whose
/// writes have not moved for `limit` is closed, which fails the pending write and ends it.
final class WriteProgress: Sendable {
    private let last = Atomic<Int64>(monotonicMilliseconds())

    /// A write completed.
    func moved() { last.store(monotonicMilliseconds(), ordering: .relaxed) }

    /// Milliseconds since the last completed write (or since the start).
    var stalledFor: Int64 { monotonicMilliseconds() - last.load(ordering: .relaxed) }

    /// Watches until cancelled: calls `close` (once) when no write has completed for `limit`,
    /// looking every `limit / 4`.
    func watch(limit: Duration, close: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        let ms = max(1, Int64(limit.components.seconds) * 1000 + limit.components.attoseconds / 1_000_000_000_000_000)
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(max(10, ms / 4)))
                if Task.isCancelled { return }
                if stalledFor > ms {
                    close()
                    return
                }
            }
        }
    }
}

/// A response writer that tells a ``WriteProgress`` each time a write completes.
struct WatchedWriter: ResponseBodyWriter {
    var inner: any ResponseBodyWriter
    let progress: WriteProgress

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await inner.write(buffer)
        progress.moved()
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await inner.finish(trailingHeaders)
    }
}

extension ResponseBody {
    /// A streamed body whose connection is closed when its writes stall for `limit`
    /// (``WriteProgress``), counted in `chronir_gateway_stalled_writes_total`.
    static func watched(channel: any Channel, limit: Duration, telemetry: Telemetry, route: String,
                        _ write: @escaping @Sendable (inout any ResponseBodyWriter) async throws -> Void) -> ResponseBody {
        ResponseBody { writer in
            let progress = WriteProgress()
            let watch = progress.watch(limit: limit) {
                telemetry.counter("chronir_gateway_stalled_writes_total", [("route", route)]).increment()
                telemetry.logger.notice("a streamed answer's client stopped reading: connection closed", metadata: ["route": "\(route)"])
                channel.close(promise: nil)
            }
            defer { watch.cancel() }
            var watched: any ResponseBodyWriter = WatchedWriter(inner: writer, progress: progress)
            try await write(&watched)
        }
    }
}
