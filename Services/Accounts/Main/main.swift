import AccountsService
import ServiceKit

await ServiceHost.main(service: "accounts", migrations: AccountsService.migrations, build: AccountsService.build)
