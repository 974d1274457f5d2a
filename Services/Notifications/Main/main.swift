import NotificationsService
import ServiceKit

await ServiceHost.main(NotificationsService.self)
