import Foundation
import Hummingbird
import Messaging
import NIOCore
import ServiceKit
import Tracing

/// JSON in and out of the HTTP API.
enum HTTPSupport {
    /// The largest body a route takes: sign-in routes 16 KiB, store routes (signed receipts and
    /// notifications) 1 MiB, every other route 64 KiB. Larger bodies get 413 `CA024`.
    static func maxBodyBytes(for path: String) -> Int {
        if path.hasPrefix("/v1/auth/") { return 16 << 10 }
        // A store notification is a JWS of a few KiB (Apple) or a Pub/Sub push (Google): 64 KiB,
        // refused by its Content-Length before it is read. Purchases carry receipts: 1 MiB.
        if path.hasPrefix("/v1/webhooks/") { return 64 << 10 }
        if path.hasPrefix("/v1/subscriptions/") { return 1 << 20 }
        // Up to 500 alarms, under the 1 MiB message limit of the bus with room for the envelope.
        if path == "/v1/alarms:batchImport" { return 768 << 10 }
        return 64 << 10
    }

    /// A JSON response with raw bytes.
    static func json(_ data: Data, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A JSON response of an encodable value.
    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        json(try JSONCoding.encode(value), status: status)
    }

    /// The one way an error is answered: an RFC 9457 problem details body
    /// (`application/problem+json`, ``ProblemDetails``) with `status` — the code's HTTP status
    /// unless given (412 for a stale `If-Match`, ``status(of:for:)``) — and `headers` (`Allow`,
    /// `Retry-After`…) added.
    static func error(_ error: ServiceError, status: Int? = nil, headers extra: HTTPFields = [:]) -> Response {
        let problem = ProblemDetails(error, status: status ?? error.code.httpStatus)
        var headers: HTTPFields = [.contentType: ProblemDetails.mediaType]
        headers.append(contentsOf: extra)
        return Response(status: .init(code: problem.status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: problem.encoded())))
    }

    /// The HTTP status of `error` answering `request`: the code's, except that a stale version
    /// (`CA010`) the request asked for with `If-Match` is 412 Precondition Failed (RFC 9110
    /// §13.1.1). A stale `version` member of a body, without `If-Match`, stays 409.
    static func status(of error: ServiceError, for request: Request) -> Int {
        if error.code == .syncConflict, request.headers[.ifMatch] != nil { return 412 }
        return error.code.httpStatus
    }

    /// Reads the body as a JSON object (an empty body reads as `{}`), refusing anything else
    /// with `CA016` (also text holding U+0000 or an unpaired surrogate, naming the field) and
    /// bodies over the route's limit (``maxBodyBytes(for:)``) with `CA024`.
    static func object(_ request: Request) async throws -> [String: JSONValue] {
        var request = request
        let buffer: ByteBuffer
        let limit = maxBodyBytes(for: request.uri.path)
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw ServiceError(.payloadTooLarge, "request body of \(length) bytes exceeds the \(limit)-byte limit of this route")
        }
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch {
            throw ServiceError(.payloadTooLarge, "request body exceeds the \(limit)-byte limit of this route")
        }
        if buffer.readableBytes == 0 { return [:] }
        let data = Data(buffer: buffer)
        let value: JSONValue
        do {
            value = try JSONCoding.decoder().decode(JSONValue.self, from: data)
        } catch {
            if let field = BodyText.fieldWithLoneSurrogate(in: data) {
                throw ServiceError(.validationFailed, "\(field) holds an unpaired UTF-16 surrogate")
            }
            throw ServiceError(.validationFailed, "body is not valid JSON")
        }
        guard case .object(let object) = value else { throw ServiceError(.validationFailed, "body must be a JSON object") }
        if let field = BodyText.fieldWithNUL(in: value) {
            throw ServiceError(.validationFailed, "\(field) must not contain U+0000")
        }
        return object
    }

    /// Reads the body as JSON and adds `extra` members (path parameters); returns the bytes.
    static func payload(_ request: Request, adding extra: [String: JSONValue] = [:]) async throws -> Data {
        var object = try await object(request)
        for (k, v) in extra { object[k] = v }
        return try JSONCoding.encode(object)
    }

    /// A query parameter as an integer within `range`, or `CA016` naming it.
    static func int(_ request: Request, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let v = Int(text), range.contains(v) else {
            throw ServiceError(.validationFailed, "query parameter \(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }
}

/// Turns every error into the API's problem details answer (``HTTPSupport/error(_:status:headers:)``):
/// `ServiceError` as is (412 for a stale `If-Match`), routing errors as `CA017`/`CA031`/`CA024`/`CA016`,
/// anything unexpected as `CA023` (and logged).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The routes' methods, for 405 answers.
    let allowed: AllowedMethods
    /// Where 5xx answers are kept for the operations page.
    let recent: RecentErrors

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await answer(request, context: context, next: next)
    }

    /// The error response, kept in ``recent`` when it is a server-side failure — under the
    /// route's template (`/cal/{file}`), never the request's path, which may hold a secret (a
    /// feed token, an invitation code).
    private func fail(_ error: ServiceError, _ request: Request, context: Context, headers: HTTPFields = [:]) -> Response {
        let status = HTTPSupport.status(of: error, for: request)
        if status >= 500 {
            recent.record(.init(at: Date(), method: request.method.rawValue, path: context.routeTemplate,
                                status: status, code: error.code.rawValue, message: error.message,
                                traceId: ServiceContext.current?.traceIdentity?.traceID))
        }
        return HTTPSupport.error(error, status: status, headers: headers)
    }

    private func answer(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            // U+0000 in a path or query parameter would reach PostgreSQL, which refuses it.
            if request.uri.description.range(of: "%00", options: .caseInsensitive) != nil {
                throw ServiceError(.validationFailed, "the URL must not contain U+0000 (%00)")
            }
            return try await next(request, context)
        } catch let error as ServiceError {
            var headers: HTTPFields = [:]
            if error.code == .rateLimited || error.code == .serviceUnavailable {
                // A 503 always says when to come back (2 s unless the service said otherwise).
                let after = error.details?["retryAfterSeconds"]?.intValue ?? (error.code == .serviceUnavailable ? 2 : nil)
                if let after { headers[.retryAfter] = String(after) }
            }
            return fail(error, request, context: context, headers: headers)
        } catch let error as HTTPError {
            switch error.status {
            case .notFound, .methodNotAllowed:
                if let methods = allowed.methods(for: request.uri.path), !methods.contains(request.method.rawValue) {
                    return fail(ServiceError(.methodNotAllowed, "\(request.uri.path) takes \(methods.joined(separator: ", ")), not \(request.method)"),
                                request, context: context, headers: [.allow: methods.joined(separator: ", ")])
                }
                return fail(ServiceError(.notFound, "no such route: \(request.method) \(request.uri.path)"), request, context: context)
            case .contentTooLarge: return fail(ServiceError(.payloadTooLarge, "request body too large"), request, context: context)
            default:
                if error.status.code < 500 {
                    return fail(ServiceError(.validationFailed, error.body ?? "bad request"), request, context: context)
                }
                context.logger.error("request failed", metadata: ["error": "\(error)"])
                return fail(ServiceError(.internalError, "internal error"), request, context: context)
            }
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return fail(ServiceError(.internalError, "internal error"), request, context: context)
        }
    }
}
