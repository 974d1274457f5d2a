import AccountsService
import AlarmsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Issue 74, item 4: every costly path has a limit an attacker cannot multiply — an IPv6 /48
/// that floods, the stores' unauthenticated notification routes, guesses of the operator's
/// token, and edits of shared alarms.
extension DenialOfServiceTests {
    @Test("an IPv6 /48 floods sign-ups and failed logins from a new /64 each time: it gets the /48's share (4 /64s' worth), not 65 536 times the limit; another /48 is served")
    func prefixFlood() async throws {
        try await withSuite(["CHRONIR_TRUSTED_PROXIES": "127.0.0.1/32, ::1", "CHRONIR_SIGNUPS_PER_ADDRESS_PER_HOUR": "2",
                             "CHRONIR_IPV6_PREFIX_SHARE": "4", "CHRONIR_LOGIN_ADDRESS_FAILURES_FREE": "2"]) { s in
            var statuses: [Int] = []
            for i in 1...12 { statuses.append(try await signup(s, from: "2001:db8:7:\(String(i, radix: 16))::1").status) }
            #expect(statuses.filter { $0 == 201 }.count == 8, "\(statuses)")
            #expect(Array(statuses.suffix(4)) == [429, 429, 429, 429], "\(statuses)")
            #expect(try await signup(s, from: "2001:db8:8:1::1").status == 201, "another /48 is another client")
            #expect(try await signup(s, from: "203.0.113.77").status == 201)

            // Failed logins (a password hash each): the /48 gets 2 × 4 of them an hour.
            let owner = try await s.signup("Owner")
            var logins: [Int] = []
            for i in 1...12 {
                let r = try await s.request(.POST, "/v1/auth/login", json: ["email": owner.email, "password": "wrong \(i)"],
                                            headers: ["X-Forwarded-For": "2001:db8:9:\(String(i, radix: 16))::1"])
                logins.append(r.status)
            }
            #expect(logins.filter { $0 == 401 }.count == 8 && logins.suffix(4).allSatisfy { $0 == 429 }, "\(logins)")
            let elsewhere = try await s.request(.POST, "/v1/auth/login", json: ["email": owner.email, "password": "correct horse"],
                                                headers: ["X-Forwarded-For": "2001:db8:a:1::1"])
            #expect(elsewhere.status == 200, "the owner from another network: \(elsewhere.status) \(elsewhere.text)")
        }
    }

    @Test("store notification routes: refused ones are limited per address (429, decided before the body is read), an oversized body is 413, and another address is served")
    func storeNotificationFlood() async throws {
        try await withSuite(["CHRONIR_TRUSTED_PROXIES": "127.0.0.1/32", "CHRONIR_STORE_NOTIFICATIONS_REFUSED_PER_HOUR": "3"]) { s in
            let from = ["X-Forwarded-For": "198.51.100.40"]
            var statuses: [Int] = []
            for path in ["/v1/webhooks/apple", "/v1/webhooks/google", "/v1/webhooks/apple", "/v1/webhooks/google", "/v1/webhooks/apple"] {
                statuses.append(try await s.request(.POST, path, json: ["garbage": true], headers: from).status)
            }
            #expect(statuses.prefix(3).allSatisfy { $0 != 429 && $0 >= 400 }, "\(statuses)")
            #expect(Array(statuses.suffix(2)) == [429, 429], "\(statuses)")
            let other = ["X-Forwarded-For": "198.51.100.41"]
            let huge = String(repeating: "x", count: 70_000)
            let oversized = try await s.request(.POST, "/v1/webhooks/apple", json: ["signedPayload": huge], headers: other)
            #expect(oversized.status == 413 && oversized.code == "CA024", "\(oversized.status) \(oversized.text.prefix(200))")
        }
    }

    @Test("the operator's token: a wrong one on a health route is 401 (not 200), counted per address (429 after 3) and the ops page the same; no token reads the statuses; the right one the details")
    func operatorTokenGuessing() async throws {
        let token = "ops-token-0123456789abcdef"
        try await withSuite(["CHRONIR_TRUSTED_PROXIES": "127.0.0.1/32", "CHRONIR_OPS_TOKEN": token, "CHRONIR_OPS_TOKEN_FAILURES_PER_HOUR": "3"]) { s in
            let guesser = ["X-Forwarded-For": "198.51.100.50"]
            #expect(try await s.request(.GET, "/livez", headers: guesser).status == 200, "no token: the status")
            var statuses: [Int] = []
            for (i, path) in ["/healthz", "/readyz", "/v1/ops/status", "/livez", "/healthz"].enumerated() {
                statuses.append(try await s.request(.GET, path, headers: guesser.merging(["Authorization": "Bearer guess-\(i)"]) { $1 }).status)
            }
            #expect(statuses == [401, 401, 401, 429, 429], "\(statuses)")
            // Wrong tokens cannot lock the operator out, even from the guesser's address (behind
            // an ingress everyone may share one): the right token is compared first.
            let sameAddress = try await s.request(.GET, "/livez", headers: guesser.merging(["Authorization": "Bearer \(token)"]) { $1 })
            #expect(sameAddress.status == 200 && sameAddress.json["instance"]?.stringValue != nil, "\(sameAddress.text)")
            let right = try await s.request(.GET, "/livez", headers: ["X-Forwarded-For": "198.51.100.51", "Authorization": "Bearer \(token)"])
            #expect(right.status == 200 && right.json["instance"]?.stringValue != nil, "\(right.text)")
            // Right tokens do not use the limit up.
            for _ in 0..<5 {
                #expect(try await s.request(.GET, "/livez", headers: ["X-Forwarded-For": "198.51.100.51", "Authorization": "Bearer \(token)"]).status == 200)
            }
        }
    }
}

extension DenialOfServiceTests {
    @Test("alarm edits are limited per account and per alarm and editor (each edit of a shared alarm pushes to every member): 429 CA019 with Retry-After past the limit, another alarm still editable")
    func alarmEditFlood() async throws {
        try await withTestSuite(label: "edits", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, build: AlarmsService.build)
            try s.startGateway(extra: ["CHRONIR_ALARM_EDITS_PER_ALARM_PER_HOUR": "3", "CHRONIR_ALARM_EDITS_PER_HOUR": "5"])
        }) { s in
            let u = try await s.signup("Editor")
            _ = try await s.setTier(u, "plus")
            var ids: [String] = []
            for t in ["One", "Two"] {
                let r = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": t, "schedule": scheduleJSON()])
                ids.append(try #require(r.json["id"]?.stringValue, "\(r.text)"))
            }
            var one: [Int] = []
            for i in 0..<4 { one.append(try await s.request(.PATCH, "/v1/alarms/\(ids[0])", token: u.token, json: ["title": "One \(i)"]).status) }
            #expect(one == [200, 200, 200, 429], "\(one)")
            let refused = try await s.request(.PATCH, "/v1/alarms/\(ids[0])", token: u.token, json: ["title": "again"])
            #expect(refused.code == "CA019" && refused.header("Retry-After") != nil, "\(refused.text)")
            // The account's own limit (5; refusals by the alarm's limit took none of it): two
            // edits of the other alarm pass, the third not.
            var two: [Int] = []
            for i in 0..<3 { two.append(try await s.request(.PATCH, "/v1/alarms/\(ids[1])", token: u.token, json: ["title": "Two \(i)"]).status) }
            #expect(two == [200, 200, 429], "\(two)")
        }
    }
}
