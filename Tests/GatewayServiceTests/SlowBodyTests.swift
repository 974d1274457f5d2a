import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("a request body trickled a byte at a time (which the idle timeout never sees) is closed at its body deadline; an honest slow body that keeps the minimum rate is answered")
    func slowBodyIsClosed() async throws {
        try await withSuite(["CHRONIR_HTTP_BODY_TIMEOUT": "1s", "CHRONIR_HTTP_BODY_MIN_RATE": "100"]) { s in
            let port = try await gatewayPort(s)
            let head = "POST /v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n"

            // The attacker: a byte every 200 ms, well inside the 75 s idle timeout each time.
            let trickle = try RawConnection(port: port)
            defer { trickle.close() }
            let started = ContinuousClock.now
            #expect(trickle.send(head + "{"))
            var closed = false
            var sent = 1
            while !closed, started.duration(to: .now) < .seconds(6) {
                closed = !trickle.send(" ")
                sent += 1
                if !closed { closed = await trickle.waitForClose(timeout: .milliseconds(200)) }
            }
            #expect(closed, "a body trickled for 6 s (\(sent) bytes) kept its connection")
            // 1 s, plus 10 ms for each of the few bytes that arrived.
            #expect(started.duration(to: .now) < .seconds(3), "closed only after \(started.duration(to: .now)) (\(sent) bytes)")

            // An honest slow client: 400 bytes at 250 bytes a second (above the 100 minimum) for
            // 1.6 s, longer than the 1 s base: it gets its answer.
            let body = "{\"email\":\"slow@example.com\",\"password\":\"not the password\"}"
            let padded = body + String(repeating: " ", count: 400 - body.utf8.count)
            let honest = try RawConnection(port: port)
            defer { honest.close() }
            #expect(honest.send(head))
            var rest = Substring(padded)
            while !rest.isEmpty {
                #expect(honest.send(String(rest.prefix(25))), "the server closed an honest slow body")
                rest = rest.dropFirst(25)
                try await Task.sleep(for: .milliseconds(100))
            }
            let (text, _) = await honest.collect(for: .seconds(3))
            #expect(text.hasPrefix("HTTP/1.1 401") || text.hasPrefix("HTTP/1.1 400"), "\(text.prefix(200))")
        }
    }

    @Test("a body that keeps the minimum rate is still cut at CHRONIR_HTTP_BODY_MAX_TIME: the rate has no ceiling of its own (issue 74)")
    func bodyCeiling() async throws {
        try await withSuite(["CHRONIR_HTTP_BODY_TIMEOUT": "1s", "CHRONIR_HTTP_BODY_MIN_RATE": "100", "CHRONIR_HTTP_BODY_MAX_TIME": "3s"]) { s in
            let port = try await gatewayPort(s)
            // 100 MB announced, sent at 400 bytes a second — four times the minimum rate, for ever
            // (the route refuses it at once, 413, and the server reads the rest to discard it).
            let head = "POST /v1/auth/signup HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
            let steady = try RawConnection(port: port)
            defer { steady.close() }
            let started = ContinuousClock.now
            #expect(steady.send(head + "{"))
            var closed = false
            while !closed, started.duration(to: .now) < .seconds(10) {
                closed = !steady.send(String(repeating: " ", count: 40))
                if !closed { closed = await steady.waitForClose(timeout: .milliseconds(100)) }
            }
            let took = started.duration(to: .now)
            #expect(closed, "a body kept at 4 × the minimum rate held its connection for \(took)")
            #expect(took < .seconds(5), "closed after \(took), the ceiling is 3 s")
        }
    }
}
