import NotificationsService
import ServiceKit

await ServiceHost.main(service: "notifications", migrations: NotificationsService.migrations, build: NotificationsService.build)
