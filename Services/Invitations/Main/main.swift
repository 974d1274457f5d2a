import InvitationsService
import ServiceKit

await ServiceHost.main(InvitationsService.self)
