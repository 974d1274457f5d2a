import Hummingbird

/// Adds `X-Content-Type-Options: nosniff` to every answer (errors and 404s included), so a
/// browser never reads a JSON or text body as HTML or script. The outermost middleware: it sees
/// every response, including those ``ErrorMiddleware`` makes of errors. When the public URL is
/// https (`CHRONIR_PUBLIC_URL`), every answer also carries `Strict-Transport-Security`
/// (a year, subdomains included), so a browser never again reaches the server in plain text.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Whether to send `Strict-Transport-Security`.
    var hsts = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        if hsts { response.headers[.strictTransportSecurity] = "max-age=31536000; includeSubDomains" }
        return response
    }
}
