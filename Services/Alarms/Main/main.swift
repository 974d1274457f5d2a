import AlarmsService
import ServiceKit

await ServiceHost.main(AlarmsService.self)
