import Foundation
import Messaging
import Testing
import ZMQ

@Suite("Envelope frames: the binary layout")
struct EnvelopeFrameTests {
    static let full = Envelope(type: "alarms.alarm-upserted", version: 3, occurredAt: Date(timeIntervalSince1970: 1_770_000_000.125),
                               source: "alarms/abc", actor: "u\"1\\\n", headers: ["traceparent": "00-abc-def-01", "x": "é✓😀", "": ""],
                               correlationId: "c-1", payload: Data("{\"a\":[1,2,{\"b\":null}],\"t\":\"✓\"}".utf8))

    @Test("every member survives the binary layout, and reads the same as from JSON")
    func roundTrip() throws {
        for original in [Self.full, Envelope(type: "rpc.reply", source: "s", payload: Data())] {
            let binary = original.encoded(as: .binary)
            #expect(binary.first == EnvelopeFrame.binaryMarker)
            #expect(EnvelopeFrame.of(binary) == .binary)
            #expect(EnvelopeFrame.of(original.encoded(as: .json)) == .json)
            let a = try Envelope.decode(binary), b = try Envelope.decode(original.encoded(as: .json))
            for e in [a, b] {
                #expect(e.id == original.id)
                #expect(e.type == original.type)
                #expect(e.version == original.version)
                #expect(ISOTime.format(e.occurredAt) == ISOTime.format(original.occurredAt))
                #expect(e.source == original.source)
                #expect(e.actor == original.actor)
                #expect(e.headers == original.headers)
                #expect(e.correlationId == original.correlationId)
            }
            // An empty payload is JSON null in both layouts.
            #expect(a.payload == b.payload)
            #expect(a.payload == (original.payload.isEmpty ? Data("null".utf8) : original.payload))
        }
    }

    @Test("a string too long for its length field is sent as JSON instead")
    func longStringFallsBack() throws {
        let e = Envelope(type: "t.x", source: "s", headers: ["tracestate": String(repeating: "a", count: 70_000)], payload: Data("{}".utf8))
        let frame = e.encoded(as: .binary)
        #expect(EnvelopeFrame.of(frame) == .json)
        #expect(try Envelope.decode(frame).headers["tracestate"]?.count == 70_000)
    }

    @Test("every truncation of a binary frame is refused with an error naming the member")
    func truncations() throws {
        let frame = Self.full.encoded(as: .binary)
        let payloadStart = frame.count - Self.full.payload.count
        for length in 1..<payloadStart {
            do {
                _ = try Envelope.decode(frame.prefix(length))
                Issue.record("a frame cut at \(length) bytes decoded")
            } catch let error as EnvelopeError {
                #expect(error.reason.contains("member"), "\(error.reason)")
            }
        }
    }

    @Test("invalid UTF-8 and an empty type are refused")
    func badStrings() throws {
        var frame = [UInt8](Envelope(type: "t.x", source: "s", payload: Data("{}".utf8)).encoded(as: .binary))
        // marker, flags, version (4), occurredAt (8), then id's length and bytes.
        frame[1 + 1 + 4 + 8 + 2] = 0xFF
        #expect(throws: EnvelopeError.self) { try Envelope.decode(Data(frame)) }
        let empty = Envelope(type: "", source: "s", payload: Data("{}".utf8)).encoded(as: .binary)
        #expect(throws: EnvelopeError.self) { try Envelope.decode(empty) }
        // A flag this reader does not know.
        var flagged = [UInt8](Envelope(type: "t.x", source: "s", payload: Data("{}".utf8)).encoded(as: .binary))
        flagged[1] |= 0x80
        #expect(throws: EnvelopeError.self) { try Envelope.decode(Data(flagged)) }
    }

    @Test("a version beyond 32 bits is sent as JSON and kept exactly")
    func wideVersion() throws {
        for version in [-1, Int(UInt32.max) + 1] {
            let frame = Envelope(type: "t.x", version: version, source: "s", payload: Data("{}".utf8)).encoded(as: .binary)
            #expect(EnvelopeFrame.of(frame) == .json)
            #expect(try Envelope.decode(frame).version == version)
        }
    }

    @Test("a server answers in the layout of the request; clients of either layout are served")
    func serverAnswersInKind() async throws {
        let f = try RPCFixture()
        let json = try RPCClient(context: f.context, target: "test", endpoints: f.server.endpoints, source: "tests/json",
                                 telemetry: .discarding(), frame: .json)
        #expect(try await json.call(Echo.self, .init(text: "j"), actor: "u").text == "j")
        #expect(try await f.client.call(Echo.self, .init(text: "b"), actor: "u").text == "b")
        await json.close()

        var options = SocketOptions(type: .dealer)
        options.connects = f.server.endpoints
        let dealer = try SocketActor(context: f.context, options: options, name: "raw")
        var it = dealer.messages.makeAsyncIterator()
        for layout in EnvelopeFrame.allCases {
            let request = Envelope(type: Echo.type, source: "t", payload: Data("{\"text\":\"x\",\"delayMs\":0}".utf8))
            dealer.send([request.encoded(as: layout)])
            let reply = try #require(await it.next())
            #expect(EnvelopeFrame.of(reply.frames[0]) == layout)
            let decoded = try Envelope.decode(reply.frames[0])
            #expect(decoded.correlationId == request.id)
            #expect(try decoded.decodePayload(Echo.Response.self).text == "x")
            // A broken frame of this layout gets its error in the same layout.
            dealer.send([layout == .binary ? Data([EnvelopeFrame.binaryMarker, 0]) : Data("{".utf8)])
            let error = try #require(await it.next())
            #expect(EnvelopeFrame.of(error.frames[0]) == layout)
            #expect(try Envelope.decode(error.frames[0]).decodePayload(ServiceError.self).code == .messageInvalid)
        }
        await dealer.close()
        await f.shutdown()
    }
}
