import Contracts
import Foundation
import Messaging
import Outbox
import PostgresNIO

/// What billing takes from the accounts stream: a deleted account's purchases stay for the
/// books (amounts, products, dates, store transaction ids) under a random name that nothing
/// links back to the account; its entitlement and snooze policies go.
struct AccountDeletionHandlers: Sendable {
    /// Owns `subscriptions` and `entitlements`.
    let subscriptions: SubscriptionStore
    /// Owns `snooze_ledger` and `snooze_policies`.
    let snoozes: SnoozeLedgerStore

    var handlers: EventHandlers {
        var h = EventHandlers(AccountsEvents.self)
        h.ignore(AccountsEvents.userUpserted, AccountsEvents.deviceUpserted, AccountsEvents.deviceRemoved, AccountsEvents.sessionRevoked, AccountsEvents.groupUpserted, AccountsEvents.groupDeleted)
        h.on(AccountsEvents.userDeleted) { user, ctx, c in
            let anonymous = "deleted-" + UUID().uuidString.lowercased()
            try await subscriptions.anonymizeSubscriptions(of: user.uid, as: anonymous, on: c, logger: ctx.logger)
            try await snoozes.anonymizeLedger(of: user.uid, as: anonymous, on: c, logger: ctx.logger)
            try await subscriptions.deleteEntitlement(of: user.uid, on: c, logger: ctx.logger)
            try await snoozes.deletePolicies(ownedBy: user.uid, on: c, logger: ctx.logger)
        }
        return h
    }
}
