import BillingService
import ServiceKit

await ServiceHost.main(BillingService.self)
