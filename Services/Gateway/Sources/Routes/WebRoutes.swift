import Crypto
import Foundation
import Wire
import Hummingbird
import NIOCore

/// The web client (`/app/`) and the operations page (`/ops/`): plain files under
/// `CHRONIR_WEB_ROOT` (its `app/` and `ops/` folders), read once at start, served with an
/// `ETag`, `Cache-Control: no-cache` (revalidated on each load, so an upgrade shows at once) and
/// a Content-Security-Policy that lets nothing load from another host. `/invite/{code}` opens
/// the app on the invitation; `/` leads to the app (302 to `/app/`) when it is served.
enum WebRoutes {
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
        var etag: String
    }

    static let types = ["html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
                        "json": "application/json", "webmanifest": "application/manifest+json", "svg": "image/svg+xml",
                        "png": "image/png", "ico": "image/x-icon", "wav": "audio/wav", "txt": "text/plain; charset=utf-8"]

    static let policy = "default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob: data:; connect-src 'self'; "
        + "script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    /// Every servable file under `root/app` and `root/ops`, keyed by URL path.
    static func load(root: String) throws -> [String: File] {
        var files: [String: File] = [:]
        let base = URL(fileURLWithPath: root).standardizedFileURL
        for section in ["app", "ops"] {
            let dir = base.appendingPathComponent(section)
            guard let walker = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: [.isRegularFileKey]) else { continue }
            for case let url as URL in walker {
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                      let type = types[url.pathExtension.lowercased()] else { continue }
                let data = try Data(contentsOf: url)
                let relative = url.standardizedFileURL.path.dropFirst(dir.standardizedFileURL.path.count)
                let tag = Hex.lowercase(SHA256.hash(data: data).prefix(12))
                files["/\(section)\(relative)"] = File(bytes: ByteBuffer(bytes: data), contentType: type, etag: "\"\(tag)\"")
            }
            if let index = files["/\(section)/index.html"] { files["/\(section)/"] = index }
        }
        return files
    }

    static func add(to router: Router<GatewayContext>, files: [String: File]) {
        guard !files.isEmpty else { return }
        for section in ["app", "ops"] {
            // The router treats `/app` and `/app/` as one path: the bare one is sent to the
            // slash, so the page's relative URLs resolve under it.
            router.get("/\(section)") { request, _ in
                if !request.uri.path.hasSuffix("/") { return Response(status: .movedPermanently, headers: [.location: "/\(section)/"]) }
                return try serve(request, files)
            }
            router.get("/\(section)/**") { request, _ in try serve(request, files) }
        }
        // The root leads to the web client, when there is one to serve (302: the root may
        // serve something else one day). HEAD too: the router makes no HEAD of a GET route.
        if files["/app/"] != nil {
            router.get("/") { _, _ in Response(status: .found, headers: [.location: "/app/"]) }
            router.head("/") { _, _ in Response(status: .found, headers: [.location: "/app/"]) }
        }
        router.get("/invite/:code") { _, context in
            let code = context.parameters.get("code") ?? ""
            guard code.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw HTTPError(.notFound)
            }
            return Response(status: .found, headers: [.location: "/app/#/invite/\(code)"])
        }
        // The links of the reset and verification mails (`AccountMails`): the token moves into
        // the fragment, which the app reads and no later request carries.
        for (path, screen) in [("/reset-password", "reset"), ("/verify-email", "verify")] {
            router.get(RouterPath(path)) { request, _ in
                let token = request.uri.queryParameters.get("token") ?? ""
                guard !token.isEmpty, token.count <= 256, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                    return Response(status: .found, headers: [.location: "/app/#/signin"])
                }
                return Response(status: .found, headers: [.location: "/app/#/\(screen)/\(token)", .init("Referrer-Policy")!: "no-referrer"])
            }
        }
    }

    static func serve(_ request: Request, _ files: [String: File]) throws -> Response {
        guard let file = files[request.uri.path] else { throw HTTPError(.notFound) }
        var headers: HTTPFields = [.eTag: file.etag, .cacheControl: "no-cache", .contentSecurityPolicy: policy]
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
    }
}
