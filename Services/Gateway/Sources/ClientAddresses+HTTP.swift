import Foundation
import GatewayCore
import HTTPTypes
import ServiceKit

extension ClientAddresses {
    /// `CHRONIR_TRUSTED_PROXIES` read (``ClientAddresses/parse(_:)``), a bad entry a
    /// configuration error naming it.
    static func setting(_ text: String?) throws -> ClientAddresses {
        do {
            return try parse(text)
        } catch {
            throw ServiceEnvironment.Invalid("CHRONIR_TRUSTED_PROXIES: \"\(error.entry)\" is not an address or CIDR block (10.0.0.0/8, fd00::/8)")
        }
    }

    /// The limit key of the client of a request whose TCP peer is `peer` and whose headers are `headers`.
    func key(peer: String?, headers: HTTPFields) -> String {
        key(peer: peer, hops: Self.hops(xForwardedFor: headers[values: .xForwardedFor], forwarded: headers[values: .forwarded]))
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwarded = HTTPField.Name("Forwarded")!
}
