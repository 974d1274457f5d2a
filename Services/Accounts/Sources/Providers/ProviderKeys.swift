import AsyncHTTPClient
import Foundation
import GoogleAPI
import JWTKit
import Logging
import NIOCore

/// A provider's published signing keys (its JWKS), fetched over HTTPS and cached: refetched
/// when older than `maxAge` or when a token names a key id the cached set lacks (the provider
/// rotated); refetches for unknown key ids happen at most once per `minRefetch`, so forged key
/// ids cannot make the service hammer the provider.
actor ProviderKeys {
    let url: String
    private let http: HTTPClient
    private let maxAge: Duration
    private let minRefetch: Duration
    private let logger: Logger
    private var keys: JWTKeyCollection?
    private var kids: Set<String> = []
    private var fetchedAt: ContinuousClock.Instant?
    private var unknownRefetchAt: ContinuousClock.Instant?

    init(url: String, http: HTTPClient, maxAge: Duration = .seconds(3600), minRefetch: Duration = .seconds(10), logger: Logger) {
        self.url = url
        self.http = http
        self.maxAge = maxAge
        self.minRefetch = minRefetch
        self.logger = logger
    }

    /// The key collection to verify a token signed with `kid`.
    func collection(for kid: String?) async throws -> JWTKeyCollection {
        let now = ContinuousClock.now
        if let keys, let fetchedAt, fetchedAt.duration(to: now) < maxAge {
            let known = kid.map { kids.contains($0) } ?? true
            if known { return keys }
            // An unknown kid: the provider may have rotated. Refetch, but only once per
            // `minRefetch` for unknown kids (a flood of made-up kids costs one fetch).
            if let last = unknownRefetchAt, last.duration(to: now) < minRefetch { return keys }
            unknownRefetchAt = now
        }
        return try await fetch()
    }

    private func fetch() async throws -> JWTKeyCollection {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        // Head and body within 10 s: a key server that trickles its answer holds no sign-in longer.
        let response: BoundedFetch.Answer
        do {
            response = try await BoundedFetch.fetch(http, request, within: .seconds(10), maxBytes: 1 << 20)
        } catch let error as BoundedFetch.TimedOut {
            throw ProviderKeysUnavailable(reason: error.description)
        }
        guard response.status == 200 else { throw ProviderKeysUnavailable(reason: "\(url) answered \(response.status)") }
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(buffer: response.body))
        let collection = JWTKeyCollection()
        try await collection.add(jwks: jwks)
        keys = collection
        kids = Set(jwks.keys.compactMap { $0.keyIdentifier?.string })
        fetchedAt = .now
        logger.info("provider keys fetched", metadata: ["url": "\(url)", "kids": "\(kids.sorted())"])
        return collection
    }
}

/// The provider's keys could not be fetched.
struct ProviderKeysUnavailable: Error, CustomStringConvertible {
    let reason: String
    var description: String { "provider keys unavailable: \(reason)" }
}
