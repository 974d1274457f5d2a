import AlarmsService
import ServiceKit

await ServiceHost.main(service: "alarms", migrations: AlarmsService.migrations, build: AlarmsService.build)
