import SchedulerService
import ServiceKit

await ServiceHost.main(service: "scheduler", migrations: SchedulerService.migrations, config: SchedulerConfig.self) {
    try await SchedulerService.build(runtime: $0, database: $1, parts: $2, config: $3)
}
