import Foundation
import Messaging
import Testing
import ZMQ

/// The scheduler's pushed stream (`events.push`): a batch that would pass the consumer's frame
/// limit used to be dropped without a word (issue 58); now it is split, and an event too large
/// to push alone goes as a heartbeat so the consumer replays it.
@Suite("Pushed events within the frame limit")
struct PushEventSinkTests {
    @Test("40 events of 10 KB to a client taking 64 KiB frames arrive in several messages, every seq once in order; a 100 KB event arrives as a heartbeat with its seq as head")
    func splitsByBytes() async throws {
        let context = ZMQContext(heartbeat: nil)
        var routerOptions = SocketOptions(type: .router)
        routerOptions.binds = ["tcp://127.0.0.1:*"]
        routerOptions.maxFrameBytes = 1 << 20
        let router = try SocketActor(context: context, options: routerOptions, name: "consumer")
        let client = try RPCClient(context: context, target: "consumer", endpoints: router.boundEndpoints, source: "scheduler/1",
                                   telemetry: .discarding(), maxFrameBytes: 64 << 10)
        let sink = PushEventSink(clients: [client], telemetry: .discarding())
        let padding = String(repeating: "x", count: 10_000)
        let events = (1...40).map { (seq: Int64($0), envelope: Data("{\"id\":\"e\($0)\",\"pad\":\"\(padding)\"}".utf8)) }
        sink.publish(stream: "scheduler", events: events)
        let big = (seq: Int64(41), envelope: Data("{\"id\":\"e41\",\"pad\":\"\(String(repeating: "y", count: 100_000))\"}".utf8))
        sink.publish(stream: "scheduler", events: [big])

        var received: [Int64] = []
        var heads: [Int64] = []
        var messages = 0
        // Read on a task of its own, so a message that never comes ends the test at a deadline.
        let collected = Task { () -> [ReceivedMessage] in
            var out: [ReceivedMessage] = []
            for await m in router.messages {
                out.append(m)
                if let e = try? Envelope.decode(m.frames.last!), let b = try? JSONCoding.decode(EventBatch.self, from: e.payload), b.head == 41 { break }
            }
            return out
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(5))
            collected.cancel()
            await router.close()
        }
        let all = await collected.value
        deadline.cancel()
        #expect(!all.isEmpty, "nothing arrived")
        for message in all {
            let envelope = try Envelope.decode(message.frames.last!)
            #expect(envelope.type == EventMethods.push)
            let batch = try JSONCoding.decode(EventBatch.self, from: envelope.payload)
            messages += 1
            received += batch.events.map(\.seq)
            heads.append(batch.head)
            #expect(message.frames.last!.count <= 64 << 10, "a message of \(message.frames.last!.count) bytes passed the limit")
        }
        #expect(received == Array(1...40), "received \(received)")
        #expect(messages >= 8, "\(messages) messages for 400 KB")
        await client.close()
        await router.close()
        context.terminate()
    }
}
