import BillingService
import ServiceKit

await ServiceHost.main(service: "billing", migrations: BillingService.migrations, build: BillingService.build)
