import AsyncHTTPClient

/// Several HTTP clients, each with its own small connection pool, a simulated device always on
/// the same one. AsyncHTTPClient's pool walks its connections on many of its events, so one pool
/// of thousands of connections made this load generator spend most of a burst in its own pool
/// (a `perf` profile of a 5 000-completion minute: the generator used 23 % of the machine, most
/// of it in `HTTPConnectionPool`), and the requests it measured waited for it.
struct HTTPClients: Sendable {
    let all: [HTTPClient]

    /// `devices` simulated devices, `devicesPerClient` to a client, each device with up to
    /// `connectionsPerDevice` connections (at least `minimumPerClient` per client). A client takes
    /// twice its share of connections: devices picked by ``client(for:)`` do not spread evenly.
    /// `connectTimeout`: how long a connection is tried (AsyncHTTPClient tries again and again
    /// until then); short with several gateways, so a request for a killed one fails over soon
    /// (with the default 10 s, each such request waited 10 s for a refused port).
    init(devices: Int, devicesPerClient: Int = 32, connectionsPerDevice: Int, minimumPerClient: Int = 16,
         connectTimeout: Duration = .seconds(10)) {
        let count = max(1, (devices + devicesPerClient - 1) / devicesPerClient)
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .nanoseconds(connectTimeout.components.seconds * 1_000_000_000
                                                     + connectTimeout.components.attoseconds / 1_000_000_000)
        configuration.connectionPool = .init(
            idleTimeout: .seconds(600),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(minimumPerClient, 2 * devicesPerClient * connectionsPerDevice))
        all = (0..<count).map { _ in HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration) }
    }

    /// The client of device number `index`: `devicesPerClient` devices at most on each.
    func client(at index: Int) -> HTTPClient {
        all[index % all.count]
    }

    /// The client of the device identified by `key` (a token).
    func client(for key: String) -> HTTPClient {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return all[Int(hash % UInt64(all.count))]
    }

    func shutdown() async {
        for client in all { try? await client.shutdown() }
    }
}
