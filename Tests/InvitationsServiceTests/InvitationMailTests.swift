import Foundation
import InvitationsService
import NIOPosix
import ServiceKit
import Support
@testable import SuiteSupport
import Testing

/// Invitations to people without an account go by mail (issue 41 item 4; `chronir-api.md`
/// §6.1 step 3, US-10.2), through the SMTP client password resets use, over TLS.
@Suite("Invitation mails and SMTP over TLS")
struct InvitationMailTests {
    @Test("an invitation to an address without an account is mailed over STARTTLS; after sign-up and proving the address it is there to accept")
    func mailedInvitation() async throws {
        let smtp = try LocalSMTPServer(tls: .startTLS)
        defer { Task { await smtp.stop() } }
        let ca = try #require(smtp.certFile)
        try await withTestSuite(label: "invite_mail", start: { s in
            try s.startCore()
            try s.startInvitations(extra: ["CHRONIR_INVITATIONS_PER_HOUR": "1000", "CHRONIR_MAIL_POLL": "100ms",
                                           "CHRONIR_SMTP_URL": "smtp://localhost:\(smtp.port)", "CHRONIR_SMTP_CA_FILE": ca,
                                           "CHRONIR_PUBLIC_URL": "https://chronir.example"])
        }) { s in
            let owner = try await s.signup("Avery")
            _ = try await s.setTier(owner, "premium")
            let created = try await s.request(.POST, "/v1/alarms", token: owner.token, json: ["title": "Water the ficus", "schedule": scheduleJSON()])
            let id = try #require(created.json["id"]?.stringValue, "\(created.text)")
            let address = "newcomer-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let invite = try await s.request(.POST, "/v1/invitations", token: owner.token,
                                             json: ["type": "alarm", "referenceId": id, "inviteeEmail": address])
            let code = try #require(invite.json["id"]?.stringValue, "\(invite.text)")

            // The mail: who, what, the link the app opens and the web link; sent under TLS
            // (the server refuses any mail before STARTTLS).
            let subject = "Avery wants to share an alarm with you on Chronir"
            #expect(await eventually(timeout: .seconds(20)) { smtp.messages(to: address, subject: subject).count == 1 },
                    "no invitation mail arrived: \(smtp.process.output.suffix(1500))")
            let mail = try #require(smtp.messages(to: address, subject: subject).first)
            #expect(mail.contains("Avery invited you to share the alarm “Water the ficus”"), "\(mail)")
            #expect(mail.contains("https://chronir.app/invite/\(code)"))
            let link = try #require(mail.range(of: #"https://chronir\.example/invite/[A-Za-z0-9_-]+"#, options: .regularExpression).map { String(mail[$0]) })
            #expect(link.hasSuffix("/invite/\(code)"))
            // Sent: the body with its link is not kept.
            let kept = try await s.inDatabase("invitations") {
                try await $0.query("SELECT body FROM mail_outbox WHERE sent_at IS NOT NULL").all(String.self)
            }
            #expect(kept == [MailOutbox.redactedBody])

            // Following the link: the newcomer signs up with the address and proves it; the
            // invitation is waiting, and accepting it shares the alarm.
            let code2 = String(link.split(separator: "/").last ?? "")
            let person = try await s.signup("Newcomer", email: address)
            let waiting = try await s.request(.GET, "/v1/invitations?role=invitee", token: person.token)
            #expect(waiting.json["invitations"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [code2], "\(waiting.text)")
            #expect(try await s.request(.GET, "/v1/invitations/\(code2)", token: person.token).json["referenceName"]?.stringValue == "Water the ficus")
            #expect(try await s.request(.POST, "/v1/invitations/\(code2)/accept", token: person.token).status == 200)
            #expect(await eventually(timeout: .seconds(15)) {
                (try? await s.request(.GET, "/v1/alarms/\(id)", token: person.token).status) == 200
            })

            // Someone who proved their address gets a push, not a mail.
            let known = try await s.signup("Known")
            #expect(await eventually(timeout: .seconds(15)) {
                (try? await s.request(.POST, "/v1/invitations", token: owner.token,
                                      json: ["type": "alarm", "referenceId": id, "inviteeEmail": known.email]).status) == 201
            })
            try await Task.sleep(for: .milliseconds(500))
            #expect(smtp.messages.count == 1, "a mail went to an account holder: \(smtp.messages.count)")
        }
    }

    @Test("the SMTP client sends over implicit TLS and STARTTLS, refuses an untrusted certificate; a remote relay must offer STARTTLS")
    func smtpClientTLS() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { Task { try? await group.shutdownGracefully() } }
        for tls in [LocalSMTPServer.TLS.implicit, .startTLS] {
            let server = try LocalSMTPServer(tls: tls)
            defer { Task { await server.stop() } }
            let scheme = tls == .implicit ? "smtps" : "smtp"
            let client = try SMTPClient(url: "\(scheme)://localhost:\(server.port)", from: "no-reply@chronir.example", caFile: server.certFile,
                                        eventLoopGroup: group)
            #expect(client.security == (tls == .implicit ? .implicitTLS : .startTLSWhenOffered))
            let sent = await eventually(timeout: .seconds(15)) {
                (try? await client.send(to: "a@example.com", subject: "Hello \(scheme)", body: ".dot line\nsecond", messageID: "t-\(scheme)")) != nil
            }
            #expect(sent, "could not send over \(scheme): \(server.process.output.suffix(800))")
            #expect(server.messages(to: "a@example.com", subject: "Hello \(scheme)").first?.contains("\n.dot line") == true, "dot-stuffing undone")
            // The same server, its certificate not trusted: nothing is sent.
            let untrusting = try SMTPClient(url: "\(scheme)://localhost:\(server.port)", from: "no-reply@chronir.example", eventLoopGroup: group)
            await #expect(throws: SMTPClient.Failure.self) {
                try await untrusting.send(to: "b@example.com", subject: "Untrusted", body: "x", messageID: "t-untrusted")
            }
            #expect(server.messages(to: "b@example.com", subject: "Untrusted").isEmpty)
        }
        // A relay that is not on this machine gets STARTTLS or nothing; plain text only when asked.
        #expect(try SMTPClient(url: "smtp://mail.example.com", from: "x@y.z", eventLoopGroup: nil).security == .startTLSRequired)
        #expect(try SMTPClient(url: "smtp://relay.internal?starttls=off", from: "x@y.z", eventLoopGroup: nil).security == .none)
        #expect(try SMTPClient(url: "smtps://mail.example.com", from: "x@y.z", eventLoopGroup: nil).port == 465)
        #expect(throws: SMTPClient.Failure.self) { try SMTPClient(url: "smtp://u:p@mail.example.com?starttls=off", from: "x@y.z", eventLoopGroup: nil) }
        #expect(throws: SMTPClient.Failure.self) { try SMTPClient(url: "http://mail.example.com", from: "x@y.z", eventLoopGroup: nil) }
        #expect(throws: SMTPClient.Failure.self) { try SMTPClient(url: "smtp://mail.example.com?tls=maybe", from: "x@y.z", eventLoopGroup: nil) }
        // A plain server on loopback still receives (a local relay); a required STARTTLS it lacks refuses.
        let plain = try LocalSMTPServer()
        defer { Task { await plain.stop() } }
        let local = try SMTPClient(url: plain.url, from: "x@chronir.example", eventLoopGroup: group)
        var lastError = ""
        #expect(await eventually(timeout: .seconds(15)) {
            do {
                try await local.send(to: "c@example.com", subject: "Plain", body: "x", messageID: "t-plain")
                return true
            } catch {
                lastError = "\(error)"
                return false
            }
        }, "\(lastError) \(plain.process.output.suffix(800))")
    }
}
