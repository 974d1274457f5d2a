import SchedulerService
import ServiceKit

await ServiceHost.main(service: "scheduler", migrations: SchedulerService.migrations, build: SchedulerService.build)
