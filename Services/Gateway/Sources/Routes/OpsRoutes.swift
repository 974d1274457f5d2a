import Logging
import Contracts
import Crypto
import Foundation
import Hummingbird
import Messaging

/// `GET /v1/ops/status`: what the operations page (`/ops/`) shows, for a bearer of the
/// operator's HTTP token (`CHRONIR_OPS_TOKEN`; unset, the route answers 404): the scheduler's
/// replicas, partitions, epochs, timers, fires and lateness (`scheduler.status`), every service's
/// health and build version, each stream's head and its consumers' checkpoints, the consumers
/// stopped at an event their build does not know (`system.streams`), and the gateway's last
/// server-side errors.
enum OpsRoutes {
    struct StreamRow: Codable, Sendable {
        struct Consumer: Codable, Sendable {
            var service: String
            var checkpoint: Int64
            var lag: Int64
            /// The event this consumer is stopped at (it does not know its type or version).
            var blockedAt: Int64?
        }
        var stream: String
        var head: Int64
        var consumers: [Consumer]
    }

    struct ServiceRow: Codable, Sendable {
        var service: String
        var status: String
        var instance: String?
        var uptimeSeconds: Double?
        var detail: String?
        var deadLetters: Int?
        /// The build version (`git describe`) the service reports in `system.health`.
        var version: String?
        /// Its consumers stopped at an event of a type or version its build does not know: they
        /// wait for an upgrade or for `chronirctl consumer skip`.
        var blocked: [BlockedConsumer]?
    }

    struct Status: Codable, Sendable {
        var generatedAt: Date
        var scheduler: SchedulerStatus?
        var schedulerError: String?
        var services: [ServiceRow]
        var streams: [StreamRow]
        var errors: [RecentErrors.Entry]
    }

    static func add(to router: Router<GatewayContext>, gateway g: Gateway, token: String?, recent: RecentErrors, logger: Logger) {
        router.get("/v1/ops/status") { request, context in
            guard let token else { throw ServiceError(.notFound, "the operations page is not enabled on this server (CHRONIR_OPS_TOKEN)") }
            guard try await isOperator(request, context, token: token, gateway: g, logger: logger) else {
                throw ServiceError(.authRequired, "the operator's token is required (Authorization: Bearer …)")
            }
            return try HTTPSupport.json(await status(g, recent: recent))
        }
    }

    /// Whether `request` carries the operator's token: false without an `Authorization`
    /// header. A wrong token is counted per address and answered 401 `CA012`, logged with its
    /// address — past `CHRONIR_OPS_TOKEN_FAILURES_PER_HOUR` (10) wrong ones an hour, 429 `CA019`
    /// and no more log lines. The right token is compared first and never counted: wrong tokens
    /// from anyone (behind an ingress everyone may share one address) cannot lock the operator
    /// out, and guessing a token of 16 characters or more is bounded by the count anyway.
    static func isOperator(_ request: Request, _ context: GatewayContext, token: String, gateway g: Gateway, logger: Logger) async throws -> Bool {
        guard request.headers[.authorization] != nil else { return false }
        do {
            try authorize(request, token: token)
            return true
        } catch {
            let address = g.source(request, context)
            try await g.throttle.admitOpsToken(address: address)
            logger.notice("wrong operator token", metadata: ["address": "\(address)", "path": "\(request.uri.path)"])
            throw error
        }
    }

    /// The operator's bearer token, compared in constant time.
    static func authorize(_ request: Request, token: String) throws {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw ServiceError(.authRequired, "the operator's token is required (Authorization: Bearer …)")
        }
        let given = SHA256.hash(data: Data(header.dropFirst(7).utf8))
        let expected = SHA256.hash(data: Data(token.utf8))
        guard given == expected else { throw ServiceError(.authRequired, "not the operator's token") }
    }

    static func status(_ g: Gateway, recent: RecentErrors) async -> Status {
        async let scheduler: Result<SchedulerStatus, any Error> = {
            do { return .success(try await g.clients.scheduler.call(SchedulerMethods.Status.self, Empty(), timeout: .seconds(2))) }
            catch { return .failure(error) }
        }()
        let perService = await withTaskGroup(of: (ServiceRow, StreamsReport?).self) { group in
            for (name, client) in g.clients.all {
                group.addTask {
                    var row = ServiceRow(service: name.rawValue, status: "down")
                    do {
                        let h = try await client.call(SystemMethods.Health.self, Empty(), timeout: .seconds(1))
                        let failing = h.checks.filter { $0.value != "ok" }.map { "\($0.key): \($0.value)" }.sorted()
                        row = ServiceRow(service: name.rawValue, status: h.status, instance: h.instance, uptimeSeconds: h.uptimeSeconds,
                                         detail: failing.isEmpty ? nil : failing.joined(separator: "; "), version: h.version)
                    } catch {
                        row.detail = "\(error)"
                        return (row, nil)
                    }
                    let streams = try? await client.call(SystemMethods.Streams.self, Empty(), timeout: .seconds(1))
                    row.deadLetters = streams?.deadLetters
                    if let blocked = streams?.blocked, !blocked.isEmpty { row.blocked = blocked }
                    return (row, streams)
                }
            }
            var all: [(ServiceRow, StreamsReport?)] = []
            for await r in group { all.append(r) }
            return all.sorted { $0.0.service < $1.0.service }
        }
        let reports = perService.compactMap(\.1)
        var heads: [String: Int64] = [:]
        for r in reports { heads.merge(r.produced) { max($0, $1) } }
        let streams = heads.keys.sorted().map { stream -> StreamRow in
            let head = heads[stream] ?? 0
            let consumers = reports.compactMap { r -> StreamRow.Consumer? in
                guard let at = r.consumed[stream] else { return nil }
                let blockedAt = r.blocked?.first(where: { $0.stream == stream })?.seq
                return .init(service: r.service, checkpoint: at, lag: max(0, head - at), blockedAt: blockedAt)
            }.sorted { $0.service < $1.service }
            return StreamRow(stream: stream, head: head, consumers: consumers)
        }
        let s = await scheduler
        return Status(generatedAt: Date(), scheduler: try? s.get(),
                      schedulerError: { if case .failure(let e) = s { return "\(e)" } else { return nil } }(),
                      services: perService.map(\.0), streams: streams, errors: recent.all)
    }
}
