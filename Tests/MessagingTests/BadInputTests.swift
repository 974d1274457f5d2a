import Foundation
import Messaging
import Testing
import ZMQ

@Suite("Bad frames are answered or dropped, and the server keeps serving")
struct BadInputTests {
    /// Sends raw frames from a bare DEALER and returns the error replies.
    func send(_ frames: [Data], to f: RPCFixture) async throws -> [ServiceError] {
        var options = SocketOptions(type: .dealer)
        options.connects = f.server.endpoints
        options.maxFrameBytes = 8 << 20
        let dealer = try SocketActor(context: f.context, options: options, name: "raw")
        for frame in frames { dealer.send([frame]) }
        var errors: [ServiceError] = []
        var it = dealer.messages.makeAsyncIterator()
        for _ in frames {
            let m = try #require(await it.next())
            let env = try Envelope.decode(m.frames[0])
            #expect(env.type == ReplyType.error)
            errors.append(try env.decodePayload(ServiceError.self))
        }
        await dealer.close()
        return errors
    }

    @Test("malformed JSON, a missing member, an unknown type and an oversized frame each get a clear error")
    func rejections() async throws {
        let f = try RPCFixture(maxFrameBytes: 64 * 1024)
        let unknown = Envelope(type: "test.nope", source: "t", payload: Data("{}".utf8)).encoded()
        let errors = try await send([
            Data("not json at all".utf8),
            Data("{\"id\":\"x\",\"type\":\"test.echo\"}".utf8),
            unknown,
            Data(repeating: 0x41, count: 100 * 1024),
            Data("{\"id\":\"x\",\"type\":\"test.echo\",\"occurredAt\":\"2026-01-01T00:00:00Z\",\"source\":\"t\",\"payload\":{\"text\":3}}".utf8),
        ], to: f)
        // Requests run concurrently, so replies may come in any order.
        #expect(errors.count == 5)
        func has(_ code: ErrorCode, _ text: String) -> Bool { errors.contains { $0.code == code && $0.message.contains(text) } }
        #expect(has(.messageInvalid, "malformed"))
        #expect(has(.messageInvalid, "occurredAt"))
        #expect(has(.messageInvalid, "test.nope"))
        #expect(has(.payloadTooLarge, "102400 bytes"))
        #expect(has(.validationFailed, "text"))
        // Still serving.
        let reply = try await f.client.call(Echo.self, .init(text: "still here"))
        #expect(reply.text == "still here")
        await f.shutdown()
    }

    @Test("a client refuses to send a request over the size limit")
    func clientLimit() async throws {
        let f = try RPCFixture(maxFrameBytes: 4096)
        await #expect(throws: ServiceError.self) {
            _ = try await f.client.call(Echo.self, .init(text: String(repeating: "a", count: 10_000)))
        }
        await f.shutdown()
    }
}
