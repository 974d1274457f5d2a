import Foundation

/// A PostgreSQL cluster of one test's own (for tests that stop and start the database), run by
/// `scripts/pg.sh` like the suite's throwaway cluster.
public final class TestCluster: Sendable {
    /// The cluster's port on 127.0.0.1.
    public let port: Int
    /// Its data directory.
    public let directory: String
    private let script: String

    /// Creates and starts a cluster on a free port.
    public init() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        script = root.appendingPathComponent("scripts/pg.sh").path
        port = freePort()
        directory = root.appendingPathComponent(".run/test-pg-fault-\(port)").path
        try run(["start", directory, String(port), "fast"])
    }

    /// The admin URL (for ``TestDatabase/create(_:adminURL:)``).
    public var adminURL: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

    /// Fast shutdown (clients are disconnected at once).
    public func stop() throws { try run(["stop", directory]) }

    /// Starts it again on the same port and data.
    public func start() throws { try run(["start", directory, String(port), "fast"]) }

    /// Stops it and removes its data.
    public func destroy() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `pg.sh` and waits for it with `waitpid` (Foundation's `Process` can miss a child's
    /// exit; see ``TestProcess/exitStatus``).
    private func run(_ arguments: [String]) throws {
        let argv = ["/bin/bash", script] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let rc = posix_spawn(&pid, "/bin/bash", &actions, nil, &cArgs, environ)
        guard rc == 0 else { throw TestSetupError("cannot run pg.sh: errno \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = (status >> 8) & 0xff
        guard status & 0x7f == 0, code == 0 else {
            throw TestSetupError("pg.sh \(arguments.joined(separator: " ")) exited \(code) (status \(status))")
        }
    }
}
