import Contracts
import Foundation
import InvitationsCore
import Logging
import Messaging
import PostgresNIO
import ServiceKit

/// The mail of an invitation to an address no account has proved (`chronir-api.md` §6.1 step
/// 3, US-10.2): who invited them to what, the link the app opens, and what to do to accept —
/// sign up or in with this address and confirm it; the invitation is then waiting for them.
/// Queued in `mail_outbox` with the invitation, sent by the service's ``MailSender``.
struct InvitationMails: Sendable {
    /// Where the web link points (`CHRONIR_PUBLIC_URL`).
    let publicURL: String

    func subject(_ i: Invitation) -> String {
        i.kind == .group ? "\(i.inviterDisplayName) invited you to \(i.referenceName) on Chronir"
            : "\(i.inviterDisplayName) wants to share an alarm with you on Chronir"
    }

    func body(_ i: Invitation) -> String {
        let what = i.kind == .group ? "to join the group “\(i.referenceName)”" : "to share the alarm “\(i.referenceName)”"
        let web = "\(publicURL)/invite/\(i.id)"
        return """
            Hello,

            \(i.inviterDisplayName) invited you \(what) on Chronir.

            Open this link on your phone (it opens the Chronir app):

            \(i.deepLink)

            or in a browser:

            \(web)

            To accept, sign up or sign in with this address and confirm it when we ask: the
            invitation will be waiting for you. It expires on \(ISOTime.format(i.expiresAt)).

            If you do not know \(i.inviterDisplayName), ignore this mail.
            """
    }

    func enqueue(_ i: Invitation, to email: String, on c: PostgresConnection, logger: Logger) async throws {
        try await MailOutbox.enqueue(to: email, subject: subject(i), body: body(i), userId: nil, on: c, logger: logger)
    }
}
