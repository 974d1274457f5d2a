import GatewayService
import ServiceKit

await ServiceHost.main(service: "gateway") { runtime, parts in
    try GatewayService.build(runtime: runtime, health: parts.health)
}
