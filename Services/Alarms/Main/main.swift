import AlarmsService
import ServiceKit

await ServiceHost.main(service: "alarms", migrations: AlarmsService.migrations, config: AlarmsConfig.self) {
    try await AlarmsService.build(runtime: $0, database: $1, parts: $2, config: $3)
}
