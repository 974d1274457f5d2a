import Foundation
import Messaging
import ZMQ

struct Echo: RPCMethod {
    struct Request: Codable, Sendable { var alarmId: String; var title: String; var scheduledDate: Date; var count: Int }
    typealias Response = Request
    static let type = "bench.echo"
}
let sample = Echo.Request(alarmId: "01a2aa2c-6f4e-7f55-9c1b-1f2d3e4f5a6b", title: "Change HVAC Filter", scheduledDate: Date(), count: 1)
let context = ZMQContext()
var router = RPCRouter()
router.on(Echo.self) { r, _ in r }
router.onRaw("raw.echo") { c in c.envelope.payload }
let server = try RPCServer(context: context, serviceName: "b", instance: "s", binds: ["tcp://127.0.0.1:*"], router: router, telemetry: .discarding(), maxConcurrent: 4096)
let client = try RPCClient(context: context, target: "b", endpoints: server.endpoints, source: "c", telemetry: .discarding(), defaultTimeout: .seconds(30))
let t = Task { try await server.run() }
let count = Int(CommandLine.arguments.dropFirst().first ?? "100000")!
let raw = CommandLine.arguments.contains("raw")
let payload = try JSONCoding.encode(sample)
let clock = ContinuousClock()
let start = clock.now
try await withThrowingTaskGroup(of: Void.self) { g in
    for w in 0..<64 { g.addTask { var k = w; while k < count { if raw { _ = try await client.callRaw(type: "raw.echo", payload: payload) } else { _ = try await client.call(Echo.self, sample) }; k += 64 } } }
    try await g.waitForAll()
}
let d = start.duration(to: clock.now)
print("\(count) in \(d): \(Double(count) / (Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18)) rt/s")
exit(0)
