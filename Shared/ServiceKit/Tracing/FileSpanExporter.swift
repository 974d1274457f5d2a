import Foundation
import Messaging
import ServiceLifecycle
import Synchronization

/// Appends finished spans as JSON lines to a file (`CHRONIR_TRACE_FILE`), for
/// `chronirctl trace` when no collector runs. Buffered; flushed every 250 ms and at shutdown.
public final class FileSpanExporter: SpanExporter, Service {
    private let handle: FileHandle
    private let buffer = Mutex<Data>(Data())

    /// Opens (creating or appending to) `path`.
    public init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let h = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        h.seekToEndOfFile()
        handle = h
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
