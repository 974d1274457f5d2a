import BillingService
import ServiceKit

await ServiceHost.main(service: "billing", migrations: BillingService.migrations, config: BillingConfig.self) {
    try await BillingService.build(runtime: $0, database: $1, parts: $2, config: $3)
}
