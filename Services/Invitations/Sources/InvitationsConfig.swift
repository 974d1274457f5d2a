import ServiceKit

/// The invitations service's settings: every `CHRONIR_*` variable it reads beyond the ones
/// every service reads (``ServiceRuntime``), parsed and validated before anything connects.
public struct InvitationsConfig: ServiceConfig {
    /// How long an invitation stays open before it expires (`CHRONIR_INVITATION_LIFETIME`,
    /// default 7 days; stored in whole seconds).
    public var lifetime: Duration
    /// Invitations one user may send per hour (`CHRONIR_INVITATIONS_PER_HOUR`, default 10,
    /// 1…100 000).
    public var perHour: Int
    /// How often expired invitations are looked for and expired (`CHRONIR_INVITATION_SWEEP`,
    /// default 60 s).
    public var sweep: Duration
    /// Where the web links in invitation mails point (`CHRONIR_PUBLIC_URL`, default
    /// `http://localhost:8080`: `{url}/invite/{code}`).
    public var publicURL: String
    /// The relay for invitations to addresses without an account (``MailSettings``: unset, the
    /// mails wait in `mail_outbox`).
    public var mail: MailSettings

    public init(environment e: ServiceEnvironment) throws {
        publicURL = e.string("CHRONIR_PUBLIC_URL", "http://localhost:8080")
        mail = try MailSettings(environment: e)
        lifetime = try e.duration("CHRONIR_INVITATION_LIFETIME", .seconds(7 * 86_400))
        perHour = try e.int("CHRONIR_INVITATIONS_PER_HOUR", 10, in: 1...100_000)
        sweep = try e.duration("CHRONIR_INVITATION_SWEEP", .seconds(60))
    }
}
