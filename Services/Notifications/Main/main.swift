// The notifications service. For now it starts, migrates its schema (outbox and checkpoints),
// connects and answers health; its behaviour arrives with its own issue.
import Messaging
import Outbox
import ServiceKit

await ServiceHost.main(service: "notifications", migrations: [OutboxSchema.migration]) { runtime, database, parts in
    var parts = parts
    parts.services.append(try runtime.makeRPCServer(router: RPCRouter(), health: parts.health))
    return parts
}
