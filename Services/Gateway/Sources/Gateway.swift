import Foundation
import GatewayCore
import Hummingbird
import Messaging

/// What route handlers share: the service clients, the token verifier and the sign-in limits.
struct Gateway: Sendable {
    let clients: GatewayClients
    let verifier: TokenVerifier
    let telemetry: Telemetry
    let throttle: AuthThrottle
    /// Who a request comes from, through the trusted proxies (``ClientAddresses``).
    let addresses: ClientAddresses

    /// The client of `request` as per-address limits count it: the TCP peer, or behind a
    /// trusted proxy the address it forwarded; IPv6 by its /64.
    func source(_ request: Request, _ context: GatewayContext) -> String {
        addresses.key(peer: context.remoteAddress?.ipAddress, headers: request.headers)
    }

    /// The verified caller of a request (`CA012` when there is none).
    func caller(_ request: Request) async throws -> Caller {
        try await verifier.verify(authorization: request.headers[.authorization])
    }

    /// Sends `payload` (the request body of `method`, passed through undecoded) to `client` on
    /// behalf of `caller` and returns the reply payload. The service validates the body.
    /// `idempotencyKey`: the request may be sent again (`retries` times) when an attempt gets no
    /// answer in time, to whichever replica takes it; only for requests the service makes
    /// idempotent by that key.
    func call(_ method: any RPCMethod.Type, _ client: RPCClient, payload: Data, caller: Caller?,
              idempotencyKey: String? = nil, retries: Int = 0, attachment: Data? = nil) async throws -> Data {
        try await client.callRaw(type: method.type, payload: payload, actor: caller?.uid, headers: caller?.headers ?? [:],
                                 idempotencyKey: idempotencyKey, retries: retries, attachment: attachment).payload
    }

    /// Sends `payload` as a request of `method` to `client` on behalf of `caller` and answers
    /// with the reply payload as the JSON body, neither decoded nor re-encoded.
    func forward(_ method: any RPCMethod.Type, _ client: RPCClient, payload: Data = Data("{}".utf8), caller: Caller?,
                 status: HTTPResponse.Status = .ok, headers: [String: String] = [:]) async throws -> Response {
        var all = caller?.headers ?? [:]
        all.merge(headers) { _, new in new }
        let reply = try await client.callRaw(type: method.type, payload: payload, actor: caller?.uid, headers: all)
        if status == .noContent { return Response(status: .noContent) }
        return HTTPSupport.json(reply.payload, status: status)
    }
}
