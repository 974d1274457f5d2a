import Foundation
import Messaging
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
            answers.append(("bad token", try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": "made-up", "password": "new battery staple"])))
            answers.append(("throttled", try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": "made-up", "password": "new battery staple"])))
            // Only accounts runs: the health check reports the other services down.
            answers.append(("health", try await s.request(.GET, "/healthz")))
            #expect(answers.map(\.1.status) == [201, 200, 401, 404, 405, 400, 429, 503], "\(answers.map { "\($0.0): \($0.1.status)" })")
            for (name, answer) in answers {
                #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(name) (\(answer.status)) has no nosniff")
            }
        }
    }

    @Test("every error answer is RFC 9457 problem details (application/problem+json): type, title, status = the HTTP status, detail, and code, message as before; Allow and Retry-After kept")
    func problemDetails() async throws {
        try await withSuite(["CHRONIR_TOKEN_CONFIRMS_PER_ADDRESS_PER_HOUR": "1"]) { s in
            var answers: [(String, HTTPResult)] = []
            answers.append(("no token", try await s.request(.GET, "/v1/me")))
            answers.append(("no route", try await s.request(.GET, "/v1/nowhere")))
            answers.append(("wrong method", try await s.request(.DELETE, "/v1/auth/login")))
            answers.append(("bad token", try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": "made-up", "password": "new battery staple"])))
            answers.append(("throttled", try await s.request(.POST, "/v1/auth/password-reset/confirm", json: ["token": "made-up", "password": "new battery staple"])))
            answers.append(("too large", try await s.request(.POST, "/v1/auth/signup",
                                                             json: ["email": "big@example.com", "password": String(repeating: "x", count: 20_000),
                                                                    "displayName": "Big"])))
            #expect(answers.map(\.1.status) == [401, 404, 405, 400, 429, 413], "\(answers.map { "\($0.0): \($0.1.status)" })")
            let codes = answers.map { $0.1.code ?? "" }
            #expect(Array(codes[0...2]) + Array(codes[4...5]) == ["CA012", "CA017", "CA031", "CA019", "CA024"], "\(codes)")
            for (name, answer) in answers {
                #expect(answer.header("Content-Type")?.hasPrefix("application/problem+json") == true,
                        "\(name): Content-Type \(answer.header("Content-Type") ?? "none")")
                let body = answer.json
                #expect(body["status"]?.intValue == answer.status, "\(name): \(answer.text)")
                let code = try #require(answer.code.flatMap(ErrorCode.init(rawValue:)), "\(name): \(answer.text)")
                #expect(body["type"]?.stringValue == "https://chronir.app/problems/" + code.name.lowercased().replacingOccurrences(of: "_", with: "-"),
                        "\(name): \(answer.text)")
                #expect(body["title"]?.stringValue?.isEmpty == false, "\(name): \(answer.text)")
                let detail = try #require(body["detail"]?.stringValue, "\(name): \(answer.text)")
                #expect(!detail.isEmpty)
                #expect(body["message"]?.stringValue == detail, "\(name): message must stay the same text as detail")
            }
            #expect(answers[2].1.header("Allow") != nil)
            #expect((Int(answers[4].1.header("Retry-After") ?? "") ?? 0) >= 1)
            #expect(answers[4].1.json["details"]?["retryAfterSeconds"]?.intValue != nil)
            // Titles are per code: the same code has the same title whatever the detail.
            let again = try await s.request(.GET, "/v1/elsewhere")
            #expect(again.json["title"] == answers[1].1.json["title"])
            #expect(again.json["detail"] != answers[1].1.json["detail"])
        }
    }
}
