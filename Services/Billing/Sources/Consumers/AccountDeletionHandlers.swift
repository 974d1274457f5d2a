import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What billing takes from the accounts stream: a deleted account's purchases stay for the
/// books (amounts, products, dates, store transaction ids) under a random name that nothing
/// links back to the account; its entitlement and snooze policies go.
struct AccountDeletionHandlers: Sendable {
    var handlers: EventHandlers {
        var h = EventHandlers(AccountsEvents.self)
        h.ignore(AccountsEvents.userUpserted, AccountsEvents.deviceUpserted, AccountsEvents.deviceRemoved, AccountsEvents.sessionRevoked, AccountsEvents.groupUpserted, AccountsEvents.groupDeleted)
        h.on(AccountsEvents.userDeleted) { user, ctx, c in
            let anonymous = "deleted-" + UUID().uuidString.lowercased()
            try await c.query("UPDATE subscriptions SET user_id = \(anonymous) WHERE user_id = \(user.uid)", logger: ctx.logger)
            try await c.query("UPDATE snooze_ledger SET user_id = \(anonymous) WHERE user_id = \(user.uid)", logger: ctx.logger)
            try await c.query("DELETE FROM entitlements WHERE user_id = \(user.uid)", logger: ctx.logger)
            try await c.query("DELETE FROM snooze_policies WHERE owner_id = \(user.uid)", logger: ctx.logger)
        }
        return h
    }
}
