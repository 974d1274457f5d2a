import InvitationsService
import ServiceKit

await ServiceHost.main(service: "invitations", migrations: InvitationsService.migrations, build: InvitationsService.build)
