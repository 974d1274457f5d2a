import AccountsService
import AlarmsService
import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Issue 57: photo bodies cost memory, so who may upload is asked before the body is read, and
/// a process holds a bounded number of bodies at once. Sent as an attacker sends them: a
/// 5 MiB `Content-Length` whose body never comes.
@Suite("Photo uploads checked before they are read")
struct PhotoUploadEdgeTests {
    func port(_ s: TestSuite) async throws -> Int {
        _ = try await s.gatewayURL()
        return try #require(s.gatewayPort.withLock { $0 })
    }

    /// A PUT of a 5 MiB JPEG whose first kilobyte alone is sent.
    func startUpload(_ s: TestSuite, alarm: String, token: String) async throws -> RawConnection {
        let c = try RawConnection(port: try await port(s))
        var head = "PUT /v1/alarms/\(alarm)/photo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
        head += "Content-Type: image/jpeg\r\nContent-Length: 5000000\r\n\r\n"
        c.send(head + "\u{FF}\u{D8}\u{FF}" + String(repeating: "x", count: 1024))
        return c
    }

    @Test("a Free owner's, a stranger's and a made-up alarm's uploads are answered (403 CA002, 404) before the body arrives; with CHRONIR_PHOTO_UPLOADS=1 a second upload while one body is held is 503 CA022 with Retry-After")
    func checkedFirst() async throws {
        try await withTestSuite(label: "photo-edge", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, build: AlarmsService.build)
            try s.startGateway(extra: ["CHRONIR_PHOTO_UPLOADS": "1"])
        }) { s in
            let free = try await s.signup("Free")
            let made = try await s.request(.POST, "/v1/alarms", token: free.token, json: ["title": "Rent", "schedule": scheduleJSON()])
            #expect(made.status == 201, "\(made.text)")
            let alarm = try #require(made.json["id"]?.stringValue)
            let plus = try await s.signup("Plus")
            _ = try await s.setTier(plus, "plus")
            let own = try await s.request(.POST, "/v1/alarms", token: plus.token, json: ["title": "Filter", "schedule": scheduleJSON()])
            let plusAlarm = try #require(own.json["id"]?.stringValue)

            // Before: each of these waited for 5 MB that never came, holding the connection.
            for (id, token, expected) in [(alarm, free.token, "CA002"), (alarm, plus.token, "CA006"), ("made-up-alarm-id", plus.token, "CA006")] {
                let c = try await startUpload(s, alarm: id, token: token)
                let answer = await c.read(timeout: .seconds(5))
                guard case .data(let text) = answer else {
                    Issue.record("no answer before the body for \(expected): \(answer)")
                    continue
                }
                #expect(text.contains(expected), "\(text.prefix(300))")
                c.close()
            }

            // One body held (its upload may proceed, and waits for the rest of its bytes) ...
            let holder = try await startUpload(s, alarm: plusAlarm, token: plus.token)
            #expect(await holder.read(timeout: .milliseconds(800)) == .timeout, "the allowed upload was answered before its body")
            // ... so a second one is refused at once instead of buffering another 5 MB.
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(count: 2048)
            let second = try await s.request(.PUT, "/v1/alarms/\(plusAlarm)/photo", token: plus.token, bytes: jpeg,
                                             headers: ["Content-Type": "image/jpeg"])
            #expect(second.status == 503 && second.code == "CA022" && second.header("Retry-After") != nil, "\(second.status) \(second.text)")
            holder.close()
            // The slot comes back when the held upload ends.
            #expect(await eventually(timeout: .seconds(10)) {
                let r = try? await s.request(.PUT, "/v1/alarms/\(plusAlarm)/photo", token: plus.token, bytes: jpeg,
                                             headers: ["Content-Type": "image/jpeg"])
                return r?.status == 200
            })
        }
    }

    @Test("one account holds at most CHRONIR_PHOTO_UPLOADS_PER_ACCOUNT bodies (429 CA019 past it), so it cannot take the process's slots from another account")
    func perAccountCap() async throws {
        try await withTestSuite(label: "photo-cap", start: { s in
            try s.start("accounts", migrations: AccountsService.migrations, build: AccountsService.build)
            try s.start("alarms", migrations: AlarmsService.migrations, build: AlarmsService.build)
            try s.startGateway(extra: ["CHRONIR_PHOTO_UPLOADS": "3", "CHRONIR_PHOTO_UPLOADS_PER_ACCOUNT": "2"])
        }) { s in
            var users: [(TestUser, String)] = []
            for name in ["Hoarder", "Other"] {
                let u = try await s.signup(name)
                _ = try await s.setTier(u, "plus")
                let made = try await s.request(.POST, "/v1/alarms", token: u.token, json: ["title": "Filter", "schedule": scheduleJSON()])
                users.append((u, try #require(made.json["id"]?.stringValue, "\(made.text)")))
            }
            let (hoarder, hoarderAlarm) = users[0]
            let (other, otherAlarm) = users[1]
            // The hoarder holds two bodies that never finish ...
            let held = [try await startUpload(s, alarm: hoarderAlarm, token: hoarder.token), try await startUpload(s, alarm: hoarderAlarm, token: hoarder.token)]
            defer { held.forEach { $0.close() } }
            for c in held { #expect(await c.read(timeout: .milliseconds(500)) == .timeout, "a held upload was answered") }
            // ... and a third is refused for the account, not for the process.
            let third = try await startUpload(s, alarm: hoarderAlarm, token: hoarder.token)
            defer { third.close() }
            guard case .data(let text) = await third.read(timeout: .seconds(5)) else {
                Issue.record("the hoarder's third upload was not refused")
                return
            }
            #expect(text.hasPrefix("HTTP/1.1 429") && text.contains("CA019"), "\(text.prefix(300))")
            // Another account still has the process's third slot.
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data(count: 2048)
            let theirs = try await s.request(.PUT, "/v1/alarms/\(otherAlarm)/photo", token: other.token, bytes: jpeg, headers: ["Content-Type": "image/jpeg"])
            #expect(theirs.status == 200, "\(theirs.status) \(theirs.text)")
        }
    }
}
