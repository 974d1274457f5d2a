import GatewayService
import ServiceKit

await ServiceHost.main(service: "gateway", migrations: nil) { runtime, _, _ in
    try GatewayService.build(runtime: runtime)
}
