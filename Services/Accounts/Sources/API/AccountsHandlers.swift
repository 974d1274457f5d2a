import AccountsCore
import Contracts
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// The request handlers of the accounts service.
struct AccountsHandlers: Sendable {
    let store: AccountsStore
    let hasher: PasswordHasher
    let issuer: TokenIssuer
    let outbox: OutboxWriter
    let refreshTTL: Duration
    let identities: IdentityTokens
    let mails: AccountMails
    /// `CHRONIR_WEBHOOK_ALLOW_PRIVATE`: accept webhook URLs that point inside (tests, local runs).
    var allowPrivateWebhooks = false

    var database: Database { store.database }
    var groups: GroupStore { GroupStore(database: store.database, outbox: outbox) }

    func register(into router: inout RPCRouter) {
        router.on(AccountsMethods.Signup.self) { request, _ in try await signup(request) }
        router.on(AccountsMethods.Login.self) { request, _ in try await login(request) }
        router.on(AccountsMethods.ProviderSignIn.self) { request, _ in try await providerSignIn(request) }
        router.on(AccountsMethods.Anonymous.self) { request, _ in try await anonymousSignup(request) }
        router.on(AccountsMethods.Link.self) { request, context in try await link(request, actor: try context.requireActor()) }
        router.on(AccountsMethods.MarkMigrated.self) { _, context in try await markMigrated(try context.requireActor()) }
        router.on(AccountsMethods.RequestPasswordReset.self) { request, _ in try await requestPasswordReset(request) }
        router.on(AccountsMethods.ConfirmPasswordReset.self) { request, _ in try await confirmPasswordReset(request) }
        router.on(AccountsMethods.RequestVerification.self) { _, context in try await requestVerification(try context.requireActor()) }
        router.on(AccountsMethods.ConfirmVerification.self) { request, context in
            try await confirmVerification(request, actor: context.actor)
        }
        router.on(AccountsMethods.Refresh.self) { request, _ in try await refresh(request) }
        router.on(AccountsMethods.Logout.self) { request, context in try await logout(request, context) }
        router.on(AccountsMethods.GetMe.self) { _, context in try await me(try context.requireActor()) }
        router.on(AccountsMethods.UpdateMe.self) { patch, context in try await update(try context.requireActor(), patch) }
        router.on(AccountsMethods.DeleteMe.self) { _, context in try await delete(try context.requireActor()) }
        router.on(AccountsMethods.PutDevice.self) { request, context in try await putDevice(try context.requireActor(), request) }
        router.on(AccountsMethods.ListDevices.self) { _, context in
            .init(devices: try await store.devices(of: try context.requireActor()))
        }
        router.on(AccountsMethods.DeleteDevice.self) { request, context in try await deleteDevice(try context.requireActor(), request.deviceId) }
        router.on(AccountsMethods.ListIdentities.self) { _, context in try await listIdentities(try context.requireActor()) }
        router.on(AccountsMethods.UnlinkIdentity.self) { request, context in try await unlinkIdentity(try context.requireActor(), request) }
        router.on(AccountsMethods.ListSessions.self) { _, context in
            try await listSessions(try context.requireActor(), current: context.envelope.headers[AuthHeaders.session])
        }
        router.on(AccountsMethods.EndSession.self) { request, context in try await endSession(try context.requireActor(), request) }
        router.on(AccountsMethods.EndAllSessions.self) { _, context in try await endAllSessions(try context.requireActor()) }
        router.on(AccountsMethods.Keys.self) { _, _ in await issuer.publishedKeys() }
        router.on(AccountsMethods.RotateSigningKey.self) { _, _ in try await issuer.rotate() }
        router.on(AccountsMethods.Revocations.self) { _, _ in try await revocations() }
        router.on(AccountsMethods.SetTier.self) { request, _ in try await setTier(request) }
    }

    // MARK: Sign-up, login, refresh, logout

    func signup(_ request: SignupRequest) async throws -> AuthResult {
        let email = try AccountValidation.email(request.email)
        try AccountValidation.password(request.password)
        let name = try AccountValidation.displayName(request.displayName)
        var settings = UserSettings()
        if let zone = request.timezone {
            try AccountValidation.timezone(zone, field: "timezone")
            settings.timezone = zone
        }
        if let p = request.platform { try AccountValidation.platform(p) }
        let hash = try await hasher.hash(request.password)
        let id = UUIDv7.string()
        let (user, session, refresh): (User, String, String) = try await outbox.transaction { [settings] c in
            guard let user = try await store.insertUser(id: id, email: email, passwordHash: hash, displayName: name,
                                                        settings: settings, platform: request.platform, on: c) else {
                throw ServiceError(.alreadyExists, "an account with this email already exists")
            }
            let (session, refresh) = try await store.startSession(userID: id, refreshTTL: refreshTTL, on: c)
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: id, on: c)
            return (user, session, refresh)
        }
        return try await result(user, session: session, refresh: refresh)
    }

    func login(_ request: LoginRequest) async throws -> AuthResult {
        guard let credentials = try await store.credentials(email: request.email.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            try await hasher.dummyVerify(request.password)
            throw ServiceError(.invalidCredentials, "email or password is wrong")
        }
        guard !credentials.hash.isEmpty else {
            // An account made by Apple or Google sign-in has no password.
            try await hasher.dummyVerify(request.password)
            throw ServiceError(.invalidCredentials, "email or password is wrong")
        }
        guard try await hasher.verify(request.password, against: credentials.hash) else {
            throw ServiceError(.invalidCredentials, "email or password is wrong")
        }
        let (user, session, refresh): (User, String, String) = try await database.transaction { c in
            guard let user = try await store.user(id: credentials.id, on: c) else {
                throw ServiceError(.invalidCredentials, "email or password is wrong")
            }
            let (session, refresh) = try await store.startSession(userID: user.uid, refreshTTL: refreshTTL, on: c)
            return (user, session, refresh)
        }
        return try await result(user, session: session, refresh: refresh)
    }

    private enum RefreshOutcome: Sendable {
        case rotated(User, String, String)
        case refused(String)
    }

    func refresh(_ request: RefreshRequest) async throws -> AuthResult {
        let outcome: RefreshOutcome = try await outbox.transaction { c in
            guard let row = try await store.lockRefreshToken(request.refreshToken, on: c) else {
                return .refused("refresh token is not valid")
            }
            if row.revoked { return .refused("the session of this refresh token was ended") }
            if row.rotated {
                // A rotated token presented again: someone holds a copy. End the whole session.
                if try await store.revokeSession(row.session, reason: "refresh token reuse", on: c) {
                    try await outbox.append(AccountsEvents.sessionRevoked, AccountsEvents.SessionRevoked(uid: row.userID, session: row.session),
                                            actor: row.userID, on: c)
                }
                return .refused("refresh token was already used; the session has been revoked")
            }
            if row.expired { return .refused("refresh token expired") }
            guard let user = try await store.user(id: row.userID, on: c) else { return .refused("account no longer exists") }
            try await store.markRefreshTokenRotated(request.refreshToken, on: c)
            let next = try await store.issueRefreshToken(session: row.session, userID: row.userID, refreshTTL: refreshTTL, on: c)
            return .rotated(user, row.session, next)
        }
        switch outcome {
        case .rotated(let user, let session, let token):
            return try await result(user, session: session, refresh: token)
        case .refused(let reason):
            throw ServiceError(.authRequired, reason)
        }
    }

    func logout(_ request: LogoutRequest, _ context: RPCContext) async throws -> Empty {
        let actor = try context.requireActor()
        try await outbox.transaction { c in
            var session = context.envelope.headers[AuthHeaders.session]
            if let token = request.refreshToken {
                guard let row = try await store.lockRefreshToken(token, on: c), row.userID == actor else {
                    throw ServiceError(.validationFailed, "refreshToken does not belong to the caller")
                }
                session = row.session
            }
            guard let session else { throw ServiceError(.validationFailed, "nothing to sign out: no session and no refreshToken") }
            if try await store.revokeSession(session, reason: "logout", on: c) {
                try await outbox.append(AccountsEvents.sessionRevoked, AccountsEvents.SessionRevoked(uid: actor, session: session), actor: actor, on: c)
            }
        }
        return Empty()
    }

    func revocations() async throws -> RevokedSessions {
        let ttl = Int(issuer.accessTTL.components.seconds) + 60
        return try await database.transaction(isolation: .repeatableRead) { c in
            let head = try await store.outboxHead(on: c)
            let sessions = try await store.sessionsRevoked(withinSeconds: ttl, on: c)
            return RevokedSessions(head: head, sessions: sessions)
        }
    }

    // MARK: Profile

    func me(_ uid: String) async throws -> User {
        guard let user = try await store.user(id: uid) else { throw ServiceError(.authRequired, "this account no longer exists") }
        return user
    }

    func update(_ uid: String, _ patch: UserPatch) async throws -> User {
        let user: User = try await outbox.transaction { c in
            guard var user = try await store.user(id: uid, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            if case .cleared = patch.displayName { throw ServiceError(.validationFailed, "displayName cannot be null") }
            if let name = patch.displayName.value { user.displayName = try AccountValidation.displayName(name) }
            if let url = patch.photoURL.value { try AccountValidation.url(url, field: "photoURL") }
            user.photoURL = patch.photoURL.applied(to: user.photoURL)
            if let p = patch.platform.value { try AccountValidation.platform(p) }
            user.platform = patch.platform.applied(to: user.platform)
            if let v = patch.appVersion.value { try AccountValidation.short(v, field: "appVersion", max: 32) }
            user.appVersion = patch.appVersion.applied(to: user.appVersion)
            user.migratedAt = patch.migratedAt.applied(to: user.migratedAt)
            if let t = patch.fcmToken.value { try AccountValidation.short(t, field: "fcmToken", max: 4096) }
            user.fcmToken = patch.fcmToken.applied(to: user.fcmToken)
            if case .cleared = patch.analyticsConsent { throw ServiceError(.validationFailed, "analyticsConsent cannot be null") }
            user.analyticsConsent = patch.analyticsConsent.applied(to: user.analyticsConsent) ?? false
            if let zone = patch.homeTimezone.value { try AccountValidation.timezone(zone, field: "homeTimezone") }
            user.homeTimezone = patch.homeTimezone.applied(to: user.homeTimezone)
            if let s = patch.settings {
                user.settings.defaultSnoozeMinutes = s.defaultSnoozeMinutes ?? user.settings.defaultSnoozeMinutes
                user.settings.preAlarmWarningEnabled = s.preAlarmWarningEnabled ?? user.settings.preAlarmWarningEnabled
                user.settings.preAlarmWarningHours = s.preAlarmWarningHours ?? user.settings.preAlarmWarningHours
                user.settings.timezone = s.timezone ?? user.settings.timezone
                user.settings.use24HourFormat = s.use24HourFormat ?? user.settings.use24HourFormat
                if let id = s.soundId, id != user.settings.soundId {
                    // The catalogue (`GET /v1/sounds`): a known tone the tier may choose (US-7.2).
                    guard let sound = Sound.named(id) else {
                        throw ServiceError(.validationFailed, "settings.soundId \(id) is not a sound of the catalogue (GET /v1/sounds)",
                                           details: .object(["field": .string("settings.soundId")]))
                    }
                    guard user.tier >= sound.tier else {
                        throw ServiceError(.tierRequired, "the sound \(sound.name) needs \(sound.tier.rawValue.capitalized) (Free has 2 sounds)")
                    }
                    user.settings.soundId = id
                }
                user.settings.vibrationEnabled = s.vibrationEnabled ?? user.settings.vibrationEnabled
                try AccountValidation.settings(user.settings)
            }
            guard let updated = try await store.updateProfile(of: uid, to: user, on: c) else {
                throw ServiceError(.authRequired, "this account no longer exists")
            }
            try await outbox.append(AccountsEvents.userUpserted, upserted(updated), actor: uid, on: c)
            return updated
        }
        return user
    }

    func delete(_ uid: String) async throws -> Empty {
        try await outbox.transaction { c in
            guard let user = try await store.user(id: uid, on: c) else { throw ServiceError(.authRequired, "this account no longer exists") }
            let sessions = try await store.revokeSessionsOnAccountDeletion(of: uid, on: c)
            for s in sessions {
                try await outbox.append(AccountsEvents.sessionRevoked, AccountsEvents.SessionRevoked(uid: uid, session: s), actor: uid, on: c)
            }
            try await store.deleteRefreshTokens(of: uid, on: c)
            // The revoked sessions stay, by id only, for gateways that start within an access
            // token's life and must still refuse its tokens (`accounts.revocations`).
            try await store.detachSessions(of: uid, on: c)
            try await groups.removeUser(uid, on: c)
            try await groups.clearInviter(uid, on: c)
            try await store.deleteUser(uid, on: c)
            try await outbox.append(AccountsEvents.userDeleted, AccountsEvents.UserDeleted(uid: uid, email: user.email), actor: uid, on: c)
        }
        return Empty()
    }

    // MARK: Devices

    func putDevice(_ uid: String, _ request: DeviceUpsert) async throws -> Device {
        let d = try AccountValidation.device(request, allowPrivateWebhooks: allowPrivateWebhooks)
        let device: Device = try await outbox.transaction { c in
            let others = try await store.deviceCount(of: uid, besides: d.deviceId, on: c)
            guard others < AccountValidation.maxDevicesPerUser else {
                throw ServiceError(.validationFailed, "an account has at most \(AccountValidation.maxDevicesPerUser) devices; remove one first (DELETE /v1/me/devices/{deviceId})")
            }
            guard let device = try await store.upsertDevice(d, of: uid, on: c) else {
                throw ServiceError(.authRequired, "this account no longer exists")
            }
            try await outbox.append(AccountsEvents.deviceUpserted, AccountsEvents.DeviceUpserted(uid: uid, device: device), actor: uid, on: c)
            return device
        }
        return device
    }

    func deleteDevice(_ uid: String, _ deviceId: String) async throws -> Empty {
        try await outbox.transaction { c in
            guard try await store.deleteDevice(deviceId, of: uid, on: c) else { throw ServiceError(.notFound, "no device \"\(deviceId)\"") }
            try await outbox.append(AccountsEvents.deviceRemoved, AccountsEvents.DeviceRemoved(uid: uid, deviceId: deviceId), actor: uid, on: c)
        }
        return Empty()
    }

    /// `billing.entitlement-changed`: the tier goes on the profile.
    var billing: EventHandlers {
        var h = EventHandlers(BillingEvents.self)
        h.on(BillingEvents.entitlementChanged) { e, _, c in
            try await store.setTier(e.tier, of: e.userId, on: c)
            if let user = try await store.user(id: e.userId, on: c) {
                try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: nil, on: c)
            }
        }
        return h
    }

    /// Sets the tier on the profile and tells the other services.
    func setTier(_ request: AccountsMethods.SetTier.Request) async throws -> User {
        let user: User = try await outbox.transaction { c in
            try await store.setTier(request.tier, of: request.userId, on: c)
            guard let user = try await store.user(id: request.userId, on: c) else { throw ServiceError(.notFound, "no user \(request.userId)") }
            try await outbox.append(AccountsEvents.userUpserted, upserted(user), actor: nil, on: c)
            return user
        }
        return user
    }

    // MARK: Helpers

    func result(_ user: User, session: String, refresh: String) async throws -> AuthResult {
        let access = try await issuer.accessToken(userID: user.uid, email: user.email,
                                                   emailVerified: !user.email.isEmpty && user.emailVerifiedAt != nil, session: session)
        return AuthResult(user: user, accessToken: access, refreshToken: refresh, expiresIn: Int(issuer.accessTTL.components.seconds))
    }

    func upserted(_ user: User) -> AccountsEvents.UserUpserted {
        .init(uid: user.uid, email: user.email, displayName: user.displayName, timezone: user.settings.timezone, tier: user.tier,
              emailVerified: !user.email.isEmpty && user.emailVerifiedAt != nil, defaultSnoozeMinutes: user.settings.defaultSnoozeMinutes,
              analyticsConsent: user.analyticsConsent, homeTimezone: user.homeTimezone)
    }
}
