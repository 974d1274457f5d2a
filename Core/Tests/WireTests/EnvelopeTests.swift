import Foundation
import Wire
import Testing

@Suite("Envelope")
struct EnvelopeTests {
    @Test("encodes and decodes every member, with escapes and unicode")
    func roundTrip() throws {
        let original = Envelope(type: "alarms.alarm-upserted", version: 2, occurredAt: Date(timeIntervalSince1970: 1_770_000_000.125),
                                source: "alarms/abc", actor: "u\"1\\\n", headers: ["traceparent": "00-abc-def-01", "x": "é✓😀"],
                                correlationId: "c-1", payload: Data("{\"a\":[1,2,{\"b\":null}],\"t\":\"✓\"}".utf8))
        let decoded = try Envelope.decode(original.encoded())
        #expect(decoded.id == original.id)
        #expect(decoded.type == original.type)
        #expect(decoded.version == 2)
        #expect(decoded.occurredAt == original.occurredAt)
        #expect(decoded.source == original.source)
        #expect(decoded.actor == original.actor)
        #expect(decoded.headers == original.headers)
        #expect(decoded.correlationId == "c-1")
        #expect(decoded.payload == original.payload)
    }

    @Test("unknown members are ignored; escaped strings decode")
    func unknownMembers() throws {
        let text = #"{"extra":{"deep":[1,{"x":"}"}]},"id":"i","type":"a\u0062c","version":1,"occurredAt":"2026-03-01T09:00:00+01:00","source":"s","actor":null,"headers":{},"payload":{}}"#
        let e = try Envelope.decode(Data(text.utf8))
        #expect(e.type == "abc")
        #expect(e.actor == nil)
        #expect(ISOTime.format(e.occurredAt) == "2026-03-01T08:00:00Z")
    }

    @Test("rejects what is not an envelope", arguments: [
        "", "[]", "{", "{\"id\":1}", "{\"id\":\"i\",\"type\":\"t\",\"occurredAt\":\"yesterday\",\"source\":\"s\",\"payload\":{}}",
        "{\"id\":\"i\",\"type\":\"t\",\"occurredAt\":\"2026-01-01T00:00:00Z\",\"source\":\"s\"}",
        "{\"id\":\"i\",\"type\":\"t\",\"occurredAt\":\"2026-01-01T00:00:00Z\",\"source\":\"s\",\"payload\":{}} trailing",
        "{\"id\":\"i\",\"type\":\"t\",\"occurredAt\":\"2026-01-01T00:00:00Z\",\"source\":\"s\",\"payload\":{\"a\":tru}}",
    ])
    func rejects(_ text: String) {
        #expect(throws: EnvelopeError.self) { try Envelope.decode(Data(text.utf8)) }
    }

    @Test("RFC 3339 formatting and parsing")
    func time() {
        #expect(ISOTime.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ISOTime.format(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
        #expect(ISOTime.parse("2024-02-29T23:59:59.9Z").map(ISOTime.format) == "2024-02-29T23:59:59.900Z")
        #expect(ISOTime.parse("2023-02-29T00:00:00Z") == nil)
        #expect(ISOTime.parse("2026-03-08T02:30:00-05:00").map(ISOTime.format) == "2026-03-08T07:30:00Z")
        #expect(ISOTime.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
    }

    @Test("UUIDv7 ids sort by time and carry version 7")
    func uuid() {
        let a = UUIDv7.string(now: Date(timeIntervalSince1970: 1000))
        let b = UUIDv7.string(now: Date(timeIntervalSince1970: 1001))
        #expect(a < b)
        #expect(a[a.index(a.startIndex, offsetBy: 14)] == "7")
    }
}
