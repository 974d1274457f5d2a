import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("health answers show internal detail only to the operator: /healthz, /livez and /readyz give anonymous callers statuses, the ops token adds instances, versions and check text")
    func healthDetailsForTheOperatorOnly() async throws {
        let token = "ops-token-for-health-details-0123"
        try await withSuite(["CHRONIR_OPS_TOKEN": token]) { s in
            for path in ["/healthz", "/livez", "/readyz"] {
                let anonymous = try await s.request(.GET, path)
                #expect([200, 503].contains(anonymous.status), "\(path): \(anonymous.status)")
                for secret in ["instance", "version", "detail", "checks", "uptimeSeconds"] {
                    #expect(!anonymous.text.contains("\"\(secret)\""), "\(path) shows \(secret) to anyone: \(anonymous.text)")
                }
                let operator_ = try await s.request(.GET, path, headers: ["Authorization": "Bearer \(token)"])
                #expect(operator_.status == anonymous.status, "\(path): \(operator_.status)")
                if path != "/healthz" {
                    #expect(operator_.text.contains("\"instance\""), "\(path) hides the instance from the operator: \(operator_.text)")
                }
            }
        }
    }
}
