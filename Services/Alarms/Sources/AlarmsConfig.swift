import ServiceKit

/// The alarms service's settings (environment, with defaults), read and validated before
/// anything connects. The settings every service reads (log, bus, database, RPC, outbox,
/// operations) are ``ServiceRuntime``'s.
public struct AlarmsConfig: ServiceConfig {
    /// An occurrence not completed within this is missed (`CHRONIR_MISSED_WINDOW`, default 2 h);
    /// completions and exports count misses with it.
    public var missedWindow: Duration
    /// Alarms a user may create per minute (`CHRONIR_ALARM_CREATIONS_PER_MINUTE`, default 5,
    /// 1…100 000).
    public var creationsPerMinute: Int
    /// The most alarms one account holds, active or not (`CHRONIR_ALARMS_PER_ACCOUNT`, default
    /// 2 000, 1…1 000 000): imports of inactive alarms count no active limit and no creation
    /// rate, so without it an account could store without end (issue 74).
    public var alarmsPerAccount: Int
    /// How long stored photo bytes no commit claimed stay before the photo sweep removes them
    /// (`CHRONIR_PHOTO_UPLOAD_GRACE`, default 1 h).
    public var photoUploadGrace: Duration
    /// How often the photo sweep removes unclaimed and replaced photo bytes from the storage
    /// (`CHRONIR_PHOTO_SWEEP`, default 5 s).
    public var photoSweep: Duration
    /// Photo uploads one user may make per minute (`CHRONIR_PHOTO_UPLOADS_PER_MINUTE`, default 3
    /// as `chronir-api.md` §13.3 sets, 1…1000).
    public var photoUploadsPerMinute: Int
    /// Photo uploads this process stores at once (`CHRONIR_PHOTO_UPLOADS`, default 8); one more
    /// is refused 503 `CA022` with `Retry-After`, so several gateways cannot pile bodies up here.
    public var photoUploads: Int
    /// Product analytics on the service's consumers (`CHRONIR_ANALYTICS`, default true; off
    /// leaves the analytics handlers out of the consumers).
    public var analytics: Bool
    /// The HMAC key of the analytics pseudonyms, in hex, at least 32 bytes
    /// (`CHRONIR_ANALYTICS_KEY` or `CHRONIR_ANALYTICS_KEY_FILE`; default none: the key kept in
    /// the `analytics_key` table, made at the first start).
    public var analyticsKey: String?
    /// The photo bucket, when `CHRONIR_S3_ENDPOINT` is set (`http(s)://host[:port]`), with
    /// `CHRONIR_S3_BUCKET` (default `chronir-photos`), `CHRONIR_S3_REGION` (default `us-east-1`),
    /// `CHRONIR_S3_ACCESS_KEY_ID` and `CHRONIR_S3_SECRET_ACCESS_KEY` (both required with the
    /// endpoint, or their `_FILE` forms). Default none: photos are kept in the service's own
    /// PostgreSQL.
    var s3: S3PhotoStorage.Config?

    public init(environment e: ServiceEnvironment) throws {
        missedWindow = try e.duration("CHRONIR_MISSED_WINDOW", .seconds(7200))
        creationsPerMinute = try e.int("CHRONIR_ALARM_CREATIONS_PER_MINUTE", 5, in: 1...100_000)
        alarmsPerAccount = try e.int("CHRONIR_ALARMS_PER_ACCOUNT", 2_000, in: 1...1_000_000)
        if let endpoint = e.optional("CHRONIR_S3_ENDPOINT") {
            guard let key = try e.secret("CHRONIR_S3_ACCESS_KEY_ID"), let secret = try e.secret("CHRONIR_S3_SECRET_ACCESS_KEY") else {
                throw ServiceEnvironment.Invalid("CHRONIR_S3_ENDPOINT needs CHRONIR_S3_ACCESS_KEY_ID and CHRONIR_S3_SECRET_ACCESS_KEY (or their _FILE forms)")
            }
            s3 = S3PhotoStorage.Config(endpoint: endpoint, bucket: e.string("CHRONIR_S3_BUCKET", "chronir-photos"),
                                       region: e.string("CHRONIR_S3_REGION", "us-east-1"), accessKeyID: key, secretAccessKey: secret)
        } else {
            s3 = nil
        }
        photoUploadGrace = try e.duration("CHRONIR_PHOTO_UPLOAD_GRACE", .seconds(3600))
        photoSweep = try e.duration("CHRONIR_PHOTO_SWEEP", .seconds(5))
        photoUploadsPerMinute = try e.int("CHRONIR_PHOTO_UPLOADS_PER_MINUTE", 3, in: 1...1000)
        photoUploads = try e.int("CHRONIR_PHOTO_UPLOADS", 8, in: 1...10_000)
        analytics = try e.bool("CHRONIR_ANALYTICS", true)
        analyticsKey = try e.secret("CHRONIR_ANALYTICS_KEY")
        if let key = analyticsKey, AnalyticsStore.parseKey(key) == nil {
            throw ServiceEnvironment.Invalid(AnalyticsStore.invalidKey)
        }
    }
}
