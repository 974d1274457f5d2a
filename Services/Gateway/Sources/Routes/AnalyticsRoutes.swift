import Contracts
import Foundation
import Hummingbird
import Messaging

/// `POST /v1/analytics/events`: the events only a client sees (US-13.1), in batches of up to
/// 100, rate-limited per account (`CHRONIR_ANALYTICS_BATCHES_PER_HOUR`).
enum AnalyticsRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway) {
        router.post("/v1/analytics/events") { request, _ in
            let caller = try await g.caller(request)
            try await g.throttle.admitAnalytics(user: caller.uid)
            let reply = try await g.call(AnalyticsMethods.Record.self, g.clients.alarms, payload: try await HTTPSupport.payload(request), caller: caller)
            return HTTPSupport.json(reply, status: .accepted)
        }
    }
}
