import GatewayService
import ServiceKit

await ServiceHost.main(service: "gateway", config: GatewayConfig.self) { runtime, parts, config in
    try GatewayService.build(runtime: runtime, health: parts.health, config: config)
}
