import AsyncHTTPClient
import Contracts
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Photos in an S3-compatible bucket (`CHRONIR_S3_ENDPOINT`, path-style addressing), each
/// request signed with ``SigV4``.
struct S3PhotoStorage: PhotoStorage {
    struct Config: Sendable {
        /// `http(s)://host[:port]`, without the bucket.
        var endpoint: String
        var bucket: String
        var region: String
        var accessKeyID: String
        var secretAccessKey: String
    }

    let config: Config
    let http: HTTPClient
    let logger: Logger
    var name: String { "s3 \(config.endpoint)/\(config.bucket)" }

    private var signer: SigV4 {
        SigV4(accessKeyID: config.accessKeyID, secretAccessKey: config.secretAccessKey, region: config.region)
    }

    func put(key: String, data: Data, type: PhotoType) async throws {
        let response = try await send("PUT", path: "/\(config.bucket)/\(key)", body: data, headers: [("Content-Type", type.rawValue)])
        guard response.status == 200 else { throw failure("PUT", key, response) }
    }

    func get(key: String) async throws -> Data? {
        let response = try await send("GET", path: "/\(config.bucket)/\(key)")
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw failure("GET", key, response) }
        return response.body
    }

    func delete(key: String) async throws {
        let response = try await send("DELETE", path: "/\(config.bucket)/\(key)")
        guard response.status == 204 || response.status == 200 || response.status == 404 else { throw failure("DELETE", key, response) }
    }

    /// Creates the bucket when it does not exist yet (at start; an existing bucket is left as it is).
    func ensureBucket() async throws {
        let head = try await send("HEAD", path: "/\(config.bucket)")
        if head.status == 200 { return }
        guard head.status == 404 else { throw failure("HEAD", "", head) }
        let created = try await send("PUT", path: "/\(config.bucket)")
        guard created.status == 200 || created.status == 409 else { throw failure("PUT bucket", "", created) }
        logger.notice("created the photo bucket", metadata: ["bucket": "\(config.bucket)"])
    }

    struct Answer {
        var status: UInt
        var body: Data
    }

    private func send(_ method: String, path: String, body: Data = Data(), headers: [(String, String)] = []) async throws -> Answer {
        let base = config.endpoint.hasSuffix("/") ? String(config.endpoint.dropLast()) : config.endpoint
        guard let url = URL(string: base), let host = url.host else { throw S3Error(message: "CHRONIR_S3_ENDPOINT \(base) is not a URL") }
        let authority = url.port.map { "\(host):\($0)" } ?? host
        var request = HTTPClientRequest(url: base + SigV4.encode(path, slash: false))
        request.method = HTTPMethod(rawValue: method)
        var toSign = headers
        toSign.append(("host", authority))
        let signed = signer.sign(method: method, path: path, headers: toSign, payloadSHA256: SigV4.payloadHash(body), date: Date())
        for (name, value) in headers + signed { request.headers.add(name: name, value: value) }
        if !body.isEmpty || method == "PUT" {
            request.body = .bytes(ByteBuffer(data: body))
            request.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: PhotoType.maxBytes + (64 << 10))
        return Answer(status: response.status.code, body: Data(buffer: bytes))
    }

    private func failure(_ method: String, _ key: String, _ answer: Answer) -> S3Error {
        S3Error(message: "S3 \(method) \(key) answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
    }
}

struct S3Error: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
