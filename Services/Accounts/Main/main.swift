import AccountsService
import ServiceKit

await ServiceHost.main(AccountsService.self)
