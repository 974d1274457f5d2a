import SchedulerService
import ServiceKit

await ServiceHost.main(SchedulerService.self)
