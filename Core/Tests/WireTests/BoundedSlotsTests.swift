import Wire
import Testing

@Suite("Bounded slots refuse past their bound at once")
struct BoundedSlotsTests {
    @Test("the slot past the limit is 503 CA022 with Retry-After; a slot given back is taken again; a refused run runs nothing")
    func bound() async throws {
        let slots = BoundedSlots(limit: 2, refusal: "busy; try again", retryAfterSeconds: 3)
        try slots.enter()
        try slots.enter()
        #expect(slots.depth == 2)
        do {
            try slots.enter()
            Issue.record("a third slot of two was given")
        } catch let e as ServiceError {
            #expect(e.code == .serviceUnavailable && e.message == "busy; try again")
            #expect(e.details?["retryAfterSeconds"]?.intValue == 3)
        }
        #expect(slots.depth == 2, "a refusal holds no slot")
        slots.leave()
        var ran = false
        #expect(try await slots.run { ran = true; return 7 } == 7)
        #expect(ran && slots.depth == 1)
        try slots.enter()
        var ranPast = false
        await #expect(throws: ServiceError.self) { try await slots.run { ranPast = true } }
        #expect(!ranPast)
        // A run that throws gives its slot back.
        slots.leave()
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await slots.run { throw Boom() } }
        #expect(slots.depth == 1)
    }
}
