import Foundation
import Messaging
import ServiceLifecycle
import Synchronization

/// Appends finished spans as JSON lines to a file (`CHRONIR_TRACE_FILE`), for
/// `chronirctl trace` when no collector runs. Buffered; flushed every 250 ms and at shutdown.
public final class FileSpanExporter: SpanExporter, Service {
    private let handle: FileHandle
    private let buffer = Mutex<Data>(Data())

    /// Opens (creating or appending to) `path`, with `O_APPEND`: every write lands at the end
    /// even when another process appends to the same file.
    public init(path: String) throws {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)])
        }
        handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    public func export(_ span: FinishedSpan) {
        guard var line = try? JSONCoding.encode(span) else { return }
        line.append(0x0A)
        let full = buffer.withLock { b -> Bool in
            b.append(line)
            return b.count > 64 * 1024
        }
        if full { flush() }
    }

    /// Writes what is buffered.
    public func flush() {
        let data = buffer.withLock { b -> Data in
            let d = b
            b.removeAll(keepingCapacity: true)
            return d
        }
        if !data.isEmpty { handle.write(data) }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                self.flush()
            }
        }
        flush()
    }
}
