import Contracts
import Messaging
import ServiceKit

/// One request client per backend service.
struct GatewayClients: Sendable {
    let accounts: RPCClient
    let alarms: RPCClient
    let scheduler: RPCClient
    let notifications: RPCClient
    let invitations: RPCClient
    let billing: RPCClient

    init(runtime: ServiceRuntime, timeout: Duration) throws {
        accounts = try runtime.rpcClient(to: .accounts, timeout: timeout)
        alarms = try runtime.rpcClient(to: .alarms, timeout: timeout, maxFrameBytes: max(runtime.maxFrameBytes, PhotoMethods.maxMessageBytes))
        scheduler = try runtime.rpcClient(to: .scheduler, timeout: timeout)
        notifications = try runtime.rpcClient(to: .notifications, timeout: timeout)
        invitations = try runtime.rpcClient(to: .invitations, timeout: timeout)
        billing = try runtime.rpcClient(to: .billing, timeout: timeout)
    }

    /// Every client with its service's name.
    var all: [(ServiceDirectory.Name, RPCClient)] {
        [(.accounts, accounts), (.alarms, alarms), (.scheduler, scheduler), (.notifications, notifications),
         (.invitations, invitations), (.billing, billing)]
    }
}
