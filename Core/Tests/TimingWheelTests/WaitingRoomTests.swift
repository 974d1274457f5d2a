import Testing
import TimingWheel

@Suite("Waiting room")
struct WaitingRoomTests {
    @Test("an item waits for its instant; one already due goes out at once; nothing goes out early")
    func instants() {
        var room = WaitingRoom<String>(now: 1_000)
        #expect(room.arrive(id: 1, user: "a", at: 900, item: "due", now: 1_000) == ["due"])
        #expect(room.arrive(id: 2, user: "a", at: 1_500, item: "later", now: 1_000).isEmpty)
        #expect(room.count == 1)
        #expect(room.nextInstant.map { $0 <= 1_500 } == true)
        #expect(room.release(now: 1_499).isEmpty)
        #expect(room.release(now: 1_500) == ["later"])
        #expect(room.count == 0)
        #expect(room.release(now: 5_000).isEmpty)
    }

    @Test("a user's items go out in id order: a due item waits behind a smaller id that is not due; other users are not held")
    func perUserOrder() {
        var room = WaitingRoom<Int64>(now: 0)
        #expect(room.arrive(id: 10, user: "a", at: 1_000, item: 10, now: 0).isEmpty)
        #expect(room.arrive(id: 11, user: "a", at: 0, item: 11, now: 100).isEmpty, "11 must wait behind 10")
        #expect(room.arrive(id: 12, user: "b", at: 0, item: 12, now: 100) == [12], "b has nothing waiting")
        #expect(room.arrive(id: 13, user: "a", at: 2_000, item: 13, now: 200).isEmpty)
        #expect(room.release(now: 999).isEmpty)
        #expect(room.release(now: 1_000) == [10, 11])
        #expect(room.release(now: 1_999).isEmpty)
        #expect(room.release(now: 2_000) == [13])
        #expect(room.count == 0)
    }

    @Test("a smaller id arriving late goes in front; a repeat of a waiting id is dropped")
    func lateArrivalAndRepeat() {
        var room = WaitingRoom<Int64>(now: 0)
        #expect(room.arrive(id: 20, user: "a", at: 500, item: 20, now: 0).isEmpty)
        #expect(room.arrive(id: 20, user: "a", at: 500, item: 20, now: 0).isEmpty)
        #expect(room.count == 1)
        #expect(room.arrive(id: 15, user: "a", at: 300, item: 15, now: 0).isEmpty)
        #expect(room.release(now: 300) == [15])
        #expect(room.release(now: 500) == [20])
    }

    @Test("a withdrawn item never goes out, and what waited behind it goes out when due")
    func withdraw() {
        var room = WaitingRoom<Int64>(now: 0)
        #expect(room.arrive(id: 1, user: "a", at: 1_000, item: 1, now: 0).isEmpty)
        #expect(room.arrive(id: 2, user: "a", at: 0, item: 2, now: 10).isEmpty)
        #expect(room.arrive(id: 3, user: "a", at: 3_000, item: 3, now: 10).isEmpty)
        #expect(room.withdraw(user: "a", ids: [1], now: 20) == [2], "2 was due and only 1 held it")
        #expect(room.withdraw(user: "a", ids: [99], now: 30).isEmpty)
        #expect(room.release(now: 1_000).isEmpty, "1 was withdrawn")
        #expect(room.withdraw(user: "a", ids: [3], now: 40).isEmpty)
        #expect(room.count == 0)
        #expect(room.release(now: 10_000).isEmpty)
    }

    @Test("ten thousand items due at one instant all go out at it, each user's in id order")
    func burst() {
        var room = WaitingRoom<Int64>(now: 0)
        for id in Int64(1)...10_000 {
            _ = room.arrive(id: id, user: "u\(id % 1_000)", at: 60_000, item: id, now: id)
        }
        #expect(room.release(now: 59_999).isEmpty)
        let out = room.release(now: 60_000)
        #expect(out.count == 10_000)
        var last: [Int64: Int64] = [:]
        var ordered = true
        for id in out {
            if let prev = last[id % 1_000], prev > id { ordered = false }
            last[id % 1_000] = id
        }
        #expect(ordered)
        #expect(room.count == 0)
    }
}
