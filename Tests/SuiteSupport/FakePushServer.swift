import Crypto
import _CryptoExtras
import Foundation
import Hummingbird
import HummingbirdHTTP2
import JWTKit
import NIOSSL
import Support
import Synchronization

/// A local server speaking the protocols of the push providers Chronir uses, over TLS with
/// HTTP/2 (as APNs requires): APNs (`/3/device/<token>`, ES256 provider tokens checked), Google
/// OAuth 2.0 (`/token`, RS256 JWT assertions checked), FCM HTTP v1
/// (`/v1/projects/<p>/messages:send`) and webhooks (`/hook/<name>`, HMAC signature checked).
/// It answers with the providers' real error shapes for scripted tokens and records every request.
final class FakePushServer: Sendable {
    struct Received: Sendable {
        var kind: String
        var path: String
        var headers: [String: String]
        var body: Data
        var status: Int
        var at = Date()
        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }
    }

    let dir: URL
    let certFile: String
    let apnsKeyFile: String
    let fcmCredentialsFile: String
    let webhookSecret = "whsec-test-\(UInt32.random(in: 0...UInt32.max))"
    let teamId = "TEAM123456"
    let keyId = "KEY1234567"
    let received = Mutex<[Received]>([])
    /// Statuses to answer, in order, for a token (or webhook name) before answering 200.
    let script = Mutex<[String: [Int]]>([:])
    let port = Mutex<Int?>(nil)
    let issuedTokens = Mutex<[String]>([])
    /// Google Play subscription purchases (`SubscriptionPurchaseV2` JSON) by purchase token.
    let playPurchases = Mutex<[String: Data]>([:])

    /// Sets what the Play API answers for `token`.
    func setPlayPurchase(_ token: String, _ purchase: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: purchase)
        playPurchases.withLock { $0[token] = data }
    }

    /// One-time product purchases (`ProductPurchase`) by "productId/token": what
    /// `purchases.products.get` answers and `:consume` changes.
    struct PlayProduct: Sendable {
        var purchaseState = 0
        var consumptionState = 0
        var orderId: String
        var purchaseTime = Date()
    }
    let playProducts = Mutex<[String: PlayProduct]>([:])

    /// A purchase of `productId` under `token`, not yet consumed.
    func setPlayProduct(_ productId: String, token: String, _ product: PlayProduct) {
        playProducts.withLock { $0["\(productId)/\(token)"] = product }
    }
    private let apnsKey: ES256PublicKey
    private let googleKey: JWTKit.Insecure.RSA.PublicKey
    private let task = Mutex<Task<Void, any Error>?>(nil)

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("fakepush-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let certificate = try TestCertificate(in: dir)
        certFile = certificate.certFile
        let keyFile = certificate.keyFile
        let apns = P256.Signing.PrivateKey()
        apnsKeyFile = dir.appendingPathComponent("AuthKey.p8").path
        try apns.pemRepresentation.write(toFile: apnsKeyFile, atomically: true, encoding: .utf8)
        apnsKey = try ES256PublicKey(pem: apns.publicKey.pemRepresentation)
        let google = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        googleKey = try JWTKit.Insecure.RSA.PublicKey(pem: google.publicKey.pemRepresentation)
        fcmCredentialsFile = dir.appendingPathComponent("service-account.json").path
        let account: [String: Any] = ["type": "service_account", "project_id": "chronir-test", "client_email": "push@chronir-test.iam.gserviceaccount.com",
                                      "private_key": google.pemRepresentation, "token_uri": "https://localhost:0/token"]
        // The token URI needs the port: written again once the server listens.
        try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: fcmCredentialsFile))
        self.googlePrivatePEM = google.pemRepresentation
    }
    private let googlePrivatePEM: String

    var baseURL: String { "https://localhost:\(port.withLock { $0 } ?? 0)" }

    /// The environment that points the notifications service here.
    var environment: [String: String] {
        ["CHRONIR_APNS_URL": baseURL, "CHRONIR_APNS_TOPIC": "app.chronir.ios", "CHRONIR_APNS_TEAM_ID": teamId, "CHRONIR_APNS_KEY_ID": keyId,
         "CHRONIR_APNS_KEY_FILE": apnsKeyFile, "CHRONIR_FCM_CREDENTIALS_FILE": fcmCredentialsFile, "CHRONIR_FCM_URL": baseURL,
         "CHRONIR_WEBHOOK_SECRET": webhookSecret, "CHRONIR_PUSH_CA_FILE": certFile, "CHRONIR_PUSH_RETRY_BASE": "300ms"]
    }

    func requests(_ kind: String) -> [Received] { received.withLock { $0.filter { $0.kind == kind } } }

    /// Starts listening; returns once the port is known and the credentials file names it.
    func start() async throws {
        let tls = try TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: dir.appendingPathComponent("key.pem").path, format: .pem)))
        let router = Router()
        router.post("/3/device/:token") { request, context in try await self.apns(request, context) }
        router.post("/token") { request, _ in try await self.oauth(request) }
        router.post("/v1/projects/:project/messages:send") { request, _ in try await self.fcm(request) }
        router.post("/hook/:name") { request, context in try await self.webhook(request, context) }
        router.get("/androidpublisher/v3/applications/:package/purchases/subscriptionsv2/tokens/:token") { request, context in
            try await self.play(request, context)
        }
        router.get("/androidpublisher/v3/applications/:package/purchases/products/:product/tokens/:token") { request, context in
            try await self.playProduct(request, context, consume: false)
        }
        router.post("/androidpublisher/v3/applications/:package/purchases/products/:product/tokens/:token") { request, context in
            try await self.playProduct(request, context, consume: true)
        }
        let app = Application(router: router, server: try .http2Upgrade(tlsConfiguration: tls),
                              configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in self.port.withLock { $0 = channel.localAddress?.port } })
        task.withLock { $0 = Task { try await app.runService() } }
        guard await eventually(timeout: .seconds(10), { self.port.withLock { $0 } != nil }) else {
            throw TestSetupError("the fake push server did not start")
        }
        let account: [String: Any] = ["type": "service_account", "project_id": "chronir-test", "client_email": "push@chronir-test.iam.gserviceaccount.com",
                                      "private_key": googlePrivatePEM, "token_uri": "\(baseURL)/token"]
        try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: fcmCredentialsFile))
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }

    private func next(_ key: String) -> Int {
        script.withLock { s in
            guard var queue = s[key], !queue.isEmpty else { return 200 }
            let status = queue.removeFirst()
            s[key] = queue.isEmpty ? nil : queue
            // A permanent answer stays.
            if status == 410 || status == 400 || status == 404 { s[key] = [status] }
            return status
        }
    }

    private func record(_ kind: String, _ request: Request, body: Data, status: Int) {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        received.withLock { $0.append(Received(kind: kind, path: request.uri.path, headers: headers, body: body, status: status)) }
    }

    private func json(_ status: Int, _ object: [String: Any], headers: HTTPFields = [:]) -> Response {
        var h = headers
        h[.contentType] = "application/json"
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(status: .init(code: status), headers: h, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    private func apns(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let body = Data(buffer: try await request.body.collect(upTo: 1 << 20))
        let token = try context.parameters.require("token")
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: apnsKey, kid: JWKIdentifier(string: keyId))
        struct Claims: JWTPayload {
            var iss: IssuerClaim
            var iat: IssuedAtClaim
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("bearer ") ? String($0.dropFirst(7)) : nil }
        guard let bearer, let claims = try? await keys.verify(bearer, as: Claims.self), claims.iss.value == teamId else {
            record("apns", request, body: body, status: 403)
            return json(403, ["reason": "InvalidProviderToken"])
        }
        let status = next(token)
        record("apns", request, body: body, status: status)
        switch status {
        case 200: return Response(status: .ok, headers: [.init("apns-id")!: request.headers[.init("apns-id")!] ?? UUID().uuidString])
        case 410: return json(410, ["reason": "Unregistered", "timestamp": Int(Date().timeIntervalSince1970 * 1000)])
        case 400: return json(400, ["reason": "BadDeviceToken"])
        case 429: return json(429, ["reason": "TooManyRequests"])
        default: return json(status, ["reason": "ServiceUnavailable"])
        }
    }

    private func oauth(_ request: Request) async throws -> Response {
        let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
        var form: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if kv.count == 2 { form[kv[0]] = kv[1] }
        }
        struct Assertion: JWTPayload {
            var iss: IssuerClaim
            var scope: String
            var aud: AudienceClaim
            var exp: ExpirationClaim
            func verify(using algorithm: some JWTAlgorithm) throws { try exp.verifyNotExpired() }
        }
        let keys = JWTKeyCollection()
        await keys.add(rsa: googleKey, digestAlgorithm: .sha256)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"],
              let claims = try? await keys.verify(assertion, as: Assertion.self),
              ["https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/androidpublisher"].contains(claims.scope) else {
            record("oauth", request, body: Data(body.utf8), status: 400)
            return json(400, ["error": "invalid_grant", "error_description": "Invalid JWT Signature."])
        }
        let token = "ya29.test-\(UUID().uuidString)"
        issuedTokens.withLock { $0.append(token) }
        record("oauth", request, body: Data(body.utf8), status: 200)
        return json(200, ["access_token": token, "expires_in": 3599, "token_type": "Bearer"])
    }

    private func fcm(_ request: Request) async throws -> Response {
        let body = Data(buffer: try await request.body.collect(upTo: 1 << 20))
        let bearer = request.headers[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        guard let bearer, issuedTokens.withLock({ $0.contains(bearer) }) else {
            record("fcm", request, body: body, status: 401)
            return json(401, ["error": ["code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"]])
        }
        let message = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["message"] as? [String: Any]
        let token = message?["token"] as? String ?? ""
        let status = next(token)
        record("fcm", request, body: body, status: status)
        func error(_ code: Int, _ status: String, _ fcm: String) -> Response {
            json(code, ["error": ["code": code, "message": fcm, "status": status,
                                  "details": [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcm]]]])
        }
        switch status {
        case 200: return json(200, ["name": "projects/chronir-test/messages/\(UUID().uuidString)"])
        case 404: return error(404, "NOT_FOUND", "UNREGISTERED")
        case 400: return error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")
        case 429: return error(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED")
        default: return error(status, "UNAVAILABLE", "UNAVAILABLE")
        }
    }

    private func play(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let token = try context.parameters.require("token")
        let bearer = request.headers[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        guard let bearer, issuedTokens.withLock({ $0.contains(bearer) }) else {
            record("play", request, body: Data(), status: 401)
            return json(401, ["error": ["code": 401, "status": "UNAUTHENTICATED", "message": "Request had invalid authentication credentials."]])
        }
        guard let purchase = playPurchases.withLock({ $0[token] }) else {
            record("play", request, body: Data(), status: 404)
            return json(404, ["error": ["code": 404, "status": "NOT_FOUND", "message": "The purchase token was not found."]])
        }
        record("play", request, body: Data(), status: 200)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: purchase)))
    }

    /// `purchases.products.get`, or `…/tokens/{token}:consume` (`consume`): a consumed purchase
    /// cannot be consumed again (400, as Google answers).
    private func playProduct(_ request: Request, _ context: BasicRequestContext, consume: Bool) async throws -> Response {
        let product = try context.parameters.require("product")
        var token = try context.parameters.require("token")
        guard !consume || token.hasSuffix(":consume") else { return json(404, ["error": ["code": 404, "status": "NOT_FOUND"]]) }
        if consume { token = String(token.dropLast(":consume".count)) }
        let bearer = request.headers[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        guard let bearer, issuedTokens.withLock({ $0.contains(bearer) }) else {
            record("play-product", request, body: Data(), status: 401)
            return json(401, ["error": ["code": 401, "status": "UNAUTHENTICATED"]])
        }
        let key = "\(product)/\(token)"
        let status: Int = playProducts.withLock { all in
            guard var p = all[key] else { return 404 }
            guard consume else { return 200 }
            guard p.consumptionState == 0 else { return 400 }
            p.consumptionState = 1
            all[key] = p
            return 204
        }
        record(consume ? "play-consume" : "play-product", request, body: Data(), status: status)
        switch status {
        case 200:
            let p = playProducts.withLock { $0[key]! }
            return json(200, ["kind": "androidpublisher#productPurchase", "purchaseState": p.purchaseState, "consumptionState": p.consumptionState,
                              "orderId": p.orderId, "purchaseTimeMillis": String(Int64(p.purchaseTime.timeIntervalSince1970 * 1000)),
                              "acknowledgementState": 1, "purchaseType": 0])
        case 204: return Response(status: .noContent)
        case 400: return json(400, ["error": ["code": 400, "status": "FAILED_PRECONDITION", "message": "The purchase is already consumed."]])
        default: return json(404, ["error": ["code": 404, "status": "NOT_FOUND", "message": "The purchase token was not found."]])
        }
    }

    private func webhook(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let body = Data(buffer: try await request.body.collect(upTo: 1 << 20))
        let name = try context.parameters.require("name")
        // t=<ts>,v1=<hex>
        let header = request.headers[.init("x-chronir-signature")!] ?? ""
        var parts: [String: String] = [:]
        for p in header.split(separator: ",") {
            let kv = p.split(separator: "=", maxSplits: 1).map(String.init)
            if kv.count == 2 { parts[kv[0]] = kv[1] }
        }
        var message = Data("\(parts["t"] ?? "").".utf8)
        message.append(body)
        let expected = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(webhookSecret.utf8)))
            .map { String(format: "%02x", $0) }.joined()
        guard parts["v1"] == expected, let t = Int(parts["t"] ?? ""), abs(Int(Date().timeIntervalSince1970) - t) < 300 else {
            record("webhook", request, body: body, status: 401)
            return json(401, ["error": "bad signature"])
        }
        let status = next(name)
        record("webhook", request, body: body, status: status)
        return status == 200 ? Response(status: .noContent) : json(status, ["error": "scripted"])
    }
}
