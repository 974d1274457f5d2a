import GatewayService
import ServiceKit

await ServiceHost.main(service: "gateway") { runtime, _ in
    try GatewayService.build(runtime: runtime)
}
