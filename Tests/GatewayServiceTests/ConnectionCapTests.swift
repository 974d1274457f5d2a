import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("one address holds at most N connections: one more is closed unanswered; the others are served; closing one frees its place")
    func connectionCap() async throws {
        try await withSuite(["CHRONIR_CONNECTIONS_PER_ADDRESS": "3"]) { s in
            let port = try await gatewayPort(s)
            let request = "GET /v1/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            // The suite's HTTP client has not connected: these four are the address's only connections.
            let connections = try (0..<4).map { _ in try RawConnection(port: port) }
            defer { for c in connections { c.close() } }
            // Connections are counted as each becomes active (on any of the server's threads), so
            // which one is over the cap is not known in advance: exactly one is closed.
            let ended = await withTaskGroup(of: (Int, Bool).self) { group in
                for (i, c) in connections.enumerated() {
                    group.addTask {
                        let closed = await c.waitForClose(timeout: .milliseconds(1_500))
                        return (i, closed)
                    }
                }
                var ended: Set<Int> = []
                for await (i, closed) in group where closed { ended.insert(i) }
                return ended
            }
            #expect(ended.count == 1, "closed: \(ended.sorted())")
            let open = connections.indices.filter { !ended.contains($0) }.map { connections[$0] }
            for c in open {
                #expect(c.send(request))
                let (text, _) = await c.collect(for: .milliseconds(500))
                #expect(text.hasPrefix("HTTP/1.1 404"), "\(text)")
            }

            // One of them goes: a new connection is served once the server has seen it go.
            open.first?.close()
            let served = await eventually(timeout: .seconds(5), every: .milliseconds(100)) {
                guard let c = try? RawConnection(port: port) else { return false }
                defer { c.close() }
                guard c.send(request) else { return false }
                if case .data(let text) = await c.read(timeout: .seconds(1)) { return text.hasPrefix("HTTP/1.1 404") }
                return false
            }
            #expect(served, "no connection was served after one of the address's connections closed")
        }
    }
}
