import Foundation
import ServiceKit
import Testing

/// The port scheme, written once in `ServiceDirectory`, as `make run` (replicas) and compose
/// (peers by container name) use it.
@Suite("Service directory: ports, peer hosts, replicas")
struct ServiceDirectoryTests {
    @Test("defaults: loopback and each service's own ports")
    func defaults() {
        let d = ServiceDirectory(environment: ServiceEnvironment([:]))
        #expect(d.rpc(.alarms) == ["tcp://127.0.0.1:7102"])
        #expect(d.events(.accounts) == ["tcp://127.0.0.1:7201"])
        #expect(d.rpcBind(for: .billing) == ["tcp://127.0.0.1:7106"])
        #expect(d.opsPort(for: .scheduler) == 9103)
    }

    @Test("containers: CHRONIR_PEER_HOST={service} names each peer by its service")
    func peerHostTemplate() {
        let d = ServiceDirectory(environment: ServiceEnvironment(["CHRONIR_PEER_HOST": "{service}", "CHRONIR_BIND_HOST": "*"]))
        #expect(d.rpc(.notifications) == ["tcp://notifications:7104"])
        #expect(d.events(.invitations) == ["tcp://invitations:7205"])
        #expect(d.rpcBind(for: .alarms) == ["tcp://*:7102"])
    }

    @Test("replicas on one machine: peers list every replica, a replica binds its own ports")
    func replicas() {
        let peers = ServiceDirectory(environment: ServiceEnvironment(["CHRONIR_SCHEDULER_REPLICAS": "3"]))
        #expect(peers.rpc(.scheduler) == ["tcp://127.0.0.1:7103", "tcp://127.0.0.1:7113", "tcp://127.0.0.1:7123"])
        #expect(peers.rpc(.alarms) == ["tcp://127.0.0.1:7102"])
        let second = ServiceDirectory(environment: ServiceEnvironment(["CHRONIR_REPLICA": "2"]))
        #expect(second.rpcBind(for: .scheduler) == ["tcp://127.0.0.1:7113"])
        #expect(second.opsPort(for: .scheduler) == 9113)
        #expect(second.pubBind(for: .alarms) == ["tcp://127.0.0.1:7212"])
    }

    @Test("CHRONIR_REPLICAS: every service's replicas, RPC and PUB; a service's own setting wins")
    func everyServiceReplicated() {
        let peers = ServiceDirectory(environment: ServiceEnvironment(["CHRONIR_REPLICAS": "2", "CHRONIR_SCHEDULER_REPLICAS": "3"]))
        #expect(peers.rpc(.alarms) == ["tcp://127.0.0.1:7102", "tcp://127.0.0.1:7112"])
        #expect(peers.events(.notifications) == ["tcp://127.0.0.1:7204", "tcp://127.0.0.1:7214"])
        #expect(peers.rpc(.scheduler).count == 3)
    }

    @Test("an explicit endpoint list wins over the scheme")
    func overrides() {
        let d = ServiceDirectory(environment: ServiceEnvironment(["CHRONIR_PEER_HOST": "{service}", "CHRONIR_ALARMS_RPC": "tcp://10.0.0.5:7000,tcp://10.0.0.6:7000"]))
        #expect(d.rpc(.alarms) == ["tcp://10.0.0.5:7000", "tcp://10.0.0.6:7000"])
        #expect(d.rpc(.accounts) == ["tcp://accounts:7101"])
    }
}
