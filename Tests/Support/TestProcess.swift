import Foundation
import Synchronization

/// A built executable of this package run as a child process (multi-process tests).
public final class TestProcess: @unchecked Sendable {
    public let name: String
    public let process = Process()
    public let logPath: String

    /// The directory holding the built executables: `CHRONIR_BIN_DIR`, else beside the test runner.
    public static var binDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["CHRONIR_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// Starts `executable` with `arguments` and extra environment; output goes to a log file.
    public convenience init(_ executable: String, _ arguments: [String] = [], environment: [String: String] = [:], label: String? = nil) throws {
        let url = Self.binDirectory.appendingPathComponent(executable)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw TestSetupError("\(url.path) is not built — build all products first (`make test` does)")
        }
        try self.init(url: url, arguments, environment: environment, label: label ?? executable)
    }

    /// Starts the program at `url` (a tool the tests need, such as a local SMTP server).
    public init(url: URL, _ arguments: [String] = [], environment: [String: String] = [:], label: String) throws {
        name = label
        let logDir = FileManager.default.temporaryDirectory.appendingPathComponent("chronir-test-logs")
        try FileManager.default.createDirectory(at: logDir, withIntermediateDirectories: true)
        logPath = logDir.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).log").path
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)!
        process.executableURL = url
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["CHRONIR_LOG_FORMAT"] = "text"
        env.merge(environment) { _, new in new }
        process.environment = env
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    /// Sends a signal.
    public func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    private let reaped = Mutex<Int32?>(nil)

    /// The exit status once the child has exited, else nil. Foundation's `Process` sometimes
    /// never notices a child's exit (a CI run hung in `waitUntilExit` beside a zombie
    /// scheduler), so a child Foundation still calls running is reaped here with `waitpid`.
    /// A child killed by a signal reports the signal number, as `terminationStatus` does.
    public var exitStatus: Int32? {
        if !process.isRunning { return reaped.withLock { $0 } ?? process.terminationStatus }
        return reaped.withLock { saved -> Int32? in
            if let saved { return saved }
            var status: Int32 = 0
            guard waitpid(process.processIdentifier, &status, WNOHANG) == process.processIdentifier else { return nil }
            let signal = status & 0x7f
            saved = signal == 0 ? (status >> 8) & 0xff : signal
            return saved
        }
    }

    /// SIGKILL and wait (up to 10 s).
    public func kill9() {
        signal(SIGKILL)
        let deadline = ContinuousClock.now + .seconds(10)
        while exitStatus == nil && ContinuousClock.now < deadline { usleep(10_000) }
    }

    /// SIGTERM and wait (up to `timeout`, then SIGKILL). Returns the exit status (-1 if the
    /// child could not be seen exiting).
    @discardableResult
    public func terminate(timeout: Duration = .seconds(15)) async -> Int32 {
        signal(SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while exitStatus == nil && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if exitStatus == nil { kill9() }
        return exitStatus ?? -1
    }

    /// Waits for the process to exit on its own.
    public func waitForExit(timeout: Duration = .seconds(60)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while exitStatus == nil && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return exitStatus
    }

    /// The output so far.
    public var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until the output contains `text`.
    public func waitForOutput(_ text: String, timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.contains(text) { return true }
            if exitStatus != nil { return output.contains(text) }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    deinit {
        if exitStatus == nil { kill(process.processIdentifier, SIGKILL) }
    }
}

/// Ports this process has handed out, never handed out twice.
private let handedOutPorts = Mutex<Set<Int>>([])

/// The first port of the kernel's ephemeral range (`ip_local_port_range`).
private let ephemeralLow = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
    .flatMap { $0.split(whereSeparator: \.isWhitespace).first }
    .flatMap { Int($0) } ?? 32768

/// A TCP port free on 127.0.0.1, chosen below the kernel's ephemeral range and never handed out
/// twice by this process. A port from the ephemeral range (what binding port 0 returns) could be
/// taken as the local port of any outgoing connection (a database pool, a ZeroMQ connect) in the
/// moment between this check and the service's own bind, and the service would then fail to
/// start; below the range only an explicit bind can take it.
/// `CHRONIR_TEST_PORTS=LOW-HIGH` narrows the choice to a range of its own, so that test
/// processes running side by side (the lanes of `scripts/test-lanes.py`) never pick the same
/// port: each checks only against the ports it handed out itself.
public func freePort() -> Int {
    let range = testPortRange
    for _ in 0..<1000 {
        let port = Int.random(in: range)
        let fresh = handedOutPorts.withLock { $0.insert(port).inserted }
        if fresh, let bound = bindLoopback(port: port), bound == port { return port }
    }
    // No port below the range was free: the kernel's choice, as before.
    return bindLoopback(port: 0) ?? 0
}

/// The range ``freePort()`` draws from: `CHRONIR_TEST_PORTS` (`LOW-HIGH`, inclusive) when set
/// and sound, else 15000 up to the kernel's ephemeral range.
private let testPortRange: Range<Int> = {
    let fallback = 15000..<max(ephemeralLow, 16000)
    guard let text = ProcessInfo.processInfo.environment["CHRONIR_TEST_PORTS"], !text.isEmpty else { return fallback }
    let bounds = text.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    guard bounds.count == 2, bounds[0] >= 1024, bounds[0] + 100 <= bounds[1], bounds[1] <= 65535 else {
        fatalError("CHRONIR_TEST_PORTS=\(text): expected LOW-HIGH with 1024 ≤ LOW, LOW + 100 ≤ HIGH ≤ 65535")
    }
    return bounds[0]..<(bounds[1] + 1)
}()

/// Binds a TCP socket to `port` on 127.0.0.1 (0: the kernel chooses), closes it, and returns
/// the port it was bound to, or nil when the bind failed.
private func bindLoopback(port: Int) -> Int? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = UInt16(port).bigEndian
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { return nil }
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
    return Int(UInt16(bigEndian: addr.sin_port))
}
