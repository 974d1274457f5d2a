import InvitationsService
import ServiceKit

await ServiceHost.main(service: "invitations", migrations: InvitationsService.migrations, config: InvitationsConfig.self) {
    try await InvitationsService.build(runtime: $0, database: $1, parts: $2, config: $3)
}
