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

    @Test("an attachment reaches the handler as raw bytes; one its header does not declare, a false count or extra frames are refused")
    func attachments() async throws {
        let f = try RPCFixture(maxFrameBytes: 64 * 1024)
        let bytes = Data((0..<60_000).map { UInt8(truncatingIfNeeded: $0) })
        let reply = try await f.client.callRaw(type: Echo.type, payload: Data("{\"text\":\"photo\",\"delayMs\":0}".utf8), attachment: bytes)
        #expect(try reply.decodePayload(Echo.Response.self).text == "photo+60000")
        // The client keeps the limit per frame: an attachment over it is not sent.
        await #expect(throws: ServiceError.self) {
            _ = try await f.client.callRaw(type: Echo.type, payload: Data("{\"text\":\"x\",\"delayMs\":0}".utf8), attachment: Data(count: 70_000))
        }

        var options = SocketOptions(type: .dealer)
        options.connects = f.server.endpoints
        options.maxFrameBytes = 8 << 20
        let dealer = try SocketActor(context: f.context, options: options, name: "raw")
        func envelope(_ headers: [String: String]) -> Data {
            Envelope(type: Echo.type, source: "t", headers: headers, payload: Data("{\"text\":\"x\"}".utf8)).encoded()
        }
        let sent: [[Data]] = [
            [envelope([:]), Data([1, 2, 3])],                                  // undeclared
            [envelope([EnvelopeHeader.attachment: "5"]), Data([1, 2, 3])],     // a false count
            [envelope([EnvelopeHeader.attachment: "3"])],                      // declared, missing
            [envelope([:]), Data([1]), Data([2])],                             // extra frames: dropped unanswered
            [envelope([EnvelopeHeader.attachment: "1"]), Data(count: 100 * 1024)], // over the frame limit
        ]
        for frames in sent { dealer.send(frames) }
        var errors: [ServiceError] = []
        var it = dealer.messages.makeAsyncIterator()
        for _ in 0..<4 {
            let m = try #require(await it.next())
            errors.append(try Envelope.decode(m.frames[0]).decodePayload(ServiceError.self))
        }
        await dealer.close()
        #expect(errors.filter { $0.code == .messageInvalid && $0.message.contains("attachment header") }.count == 3, "\(errors)")
        #expect(errors.contains { $0.code == .payloadTooLarge }, "\(errors)")
        // Still serving.
        #expect(try await f.client.call(Echo.self, .init(text: "still here")).text == "still here")
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
