import Hummingbird

/// Adds `X-Content-Type-Options: nosniff` to every answer (errors and 404s included), so a
/// browser never reads a JSON or text body as HTML or script. The outermost middleware: it sees
/// every response, including those ``ErrorMiddleware`` makes of errors.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }
}
