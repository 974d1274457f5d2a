import Foundation
import Support
@testable import SuiteSupport
import Testing

extension DenialOfServiceTests {
    @Test("every answer carries X-Content-Type-Options: nosniff (200, 201, 400, 401, 404, 405, 429, 503)")
    func nosniffEverywhere() async throws {
        try await withSuite(["CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR": "1"]) { s in
            var answers: [(String, HTTPResult)] = []
            let signup = try await s.request(.POST, "/v1/auth/signup", json: ["email": "n@x.com", "password": "correct horse", "displayName": "N"])
            answers.append(("signup", signup))
            let token = try #require(signup.json["accessToken"]?.stringValue)
            answers.append(("me", try await s.request(.GET, "/v1/me", token: token)))
            answers.append(("no token", try await s.request(.GET, "/v1/me")))
            answers.append(("no route", try await s.request(.GET, "/v1/nowhere")))
            answers.append(("wrong method", try await s.request(.DELETE, "/v1/auth/login")))
            answers.append(("bad token", try await s.request(.POST, "/v1/auth/verify-email", json: ["token": "made-up"])))
            answers.append(("throttled", try await s.request(.POST, "/v1/auth/verify-email", json: ["token": "made-up"])))
            // Only accounts runs: the health check reports the other services down.
            answers.append(("health", try await s.request(.GET, "/healthz")))
            #expect(answers.map(\.1.status) == [201, 200, 401, 404, 405, 400, 429, 503], "\(answers.map { "\($0.0): \($0.1.status)" })")
            for (name, answer) in answers {
                #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(name) (\(answer.status)) has no nosniff")
            }
        }
    }
}
