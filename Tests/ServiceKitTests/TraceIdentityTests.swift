import ServiceKit
import Testing

/// `traceparent` parsing (W3C Trace Context, version 00), read byte by byte.
@Suite struct TraceIdentityTests {
    @Test func readsAValidHeaderAndLowercasesIt() throws {
        let t = try #require(TraceIdentity(traceparent: "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01"))
        #expect(t.traceID == "0af7651916cd43dd8448eb211c80319c")
        #expect(t.spanID == "b7ad6b7169203331")
        #expect(t.sampled)
        #expect(t.traceparent == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        let unsampled = try #require(TraceIdentity(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-02"))
        #expect(!unsampled.sampled)
    }

    @Test(arguments: [
        "",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",           // no flags
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",       // too long
        "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",        // wrong separator
        "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01",        // not hex
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",        // zero trace id
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",        // zero span id
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0x",        // bad flags
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333é-01",        // a multi-byte character
    ])
    func refusesMalformedHeaders(_ header: String) {
        #expect(TraceIdentity(traceparent: header) == nil)
    }
}
