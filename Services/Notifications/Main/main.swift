import NotificationsService
import ServiceKit

await ServiceHost.main(service: "notifications", migrations: NotificationsService.migrations, config: NotificationsConfig.self) {
    try await NotificationsService.build(runtime: $0, database: $1, parts: $2, config: $3)
}
