import AccountsService
import ServiceKit

await ServiceHost.main(service: "accounts", migrations: AccountsService.migrations, config: AccountsConfig.self) {
    try await AccountsService.build(runtime: $0, database: $1, parts: $2, config: $3)
}
