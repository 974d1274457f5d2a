import Foundation
import NIOSSL
import PostgresNIO

/// How a service reaches PostgreSQL: from `DATABASE_URL`
/// (`postgres://user:password@host:port/database?sslmode=disable`) or the libpq variables
/// `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`; plus the schema the
/// service owns (`CHRONIR_DB_SCHEMA`, default the service's name) and the pool size
/// (`CHRONIR_DB_POOL_SIZE`, default 10). `DATABASE_URL` and `PGPASSWORD` hold secrets: each may
/// be given as a file instead (`DATABASE_URL_FILE`, `PGPASSWORD_FILE`; ``EnvironmentSecret``).
public struct DatabaseConfig: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// `disable`, `prefer` or `require`.
    public var sslMode: String
    /// The schema this service owns; every query runs with it as `search_path`.
    public var schema: String
    /// Maximum connections in the pool.
    public var poolSize: Int
    /// How long opening a connection may take, TLS and authentication included.
    public var connectTimeout: Duration = .seconds(10)
    /// The server's `statement_timeout` on every connection (nil: the server's own, usually
    /// none): a statement that waits longer (on a lock a frozen process holds, say) fails with
    /// 57014 and is retried or answered as an error instead of holding its caller for ever.
    public var statementTimeout: Duration? = nil

    public init(host: String = "127.0.0.1", port: Int = 5432, username: String, password: String? = nil,
                database: String, sslMode: String = "disable", schema: String, poolSize: Int = 10) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.sslMode = sslMode
        self.schema = schema
        self.poolSize = poolSize
    }

    /// Why a configuration could not be read.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads the configuration from `environment`. Fails when neither `DATABASE_URL` nor
    /// `PGUSER`/`PGDATABASE` (or `USER`) say where to connect, or when a value is malformed.
    public static func fromEnvironment(_ environment: [String: String], defaultSchema: String) throws -> DatabaseConfig {
        let schema = environment["CHRONIR_DB_SCHEMA"] ?? defaultSchema
        guard schema.range(of: "^[a-z_][a-z0-9_]{0,62}$", options: .regularExpression) != nil else {
            throw Invalid(description: "CHRONIR_DB_SCHEMA \"\(schema)\" is not a plain lower-case identifier")
        }
        let poolSize = try environment["CHRONIR_DB_POOL_SIZE"].map { text -> Int in
            guard let n = Int(text), n > 0 else { throw Invalid(description: "CHRONIR_DB_POOL_SIZE must be a positive integer") }
            return n
        } ?? 10
        if let url = try secret("DATABASE_URL", in: environment) {
            var config = try parse(url: url, schema: schema)
            config.poolSize = poolSize
            return config
        }
        guard let user = environment["PGUSER"] ?? environment["USER"] else {
            throw Invalid(description: """
                set DATABASE_URL (postgres://user:password@host:port/database) or DATABASE_URL_FILE (a file holding it), \
                or PGHOST/PGPORT/PGUSER/PGDATABASE
                """)
        }
        let port = try environment["PGPORT"].map { text -> Int in
            guard let p = Int(text), (1...65535).contains(p) else { throw Invalid(description: "PGPORT must be a port number") }
            return p
        } ?? 5432
        let password = try secret("PGPASSWORD", in: environment)
        return DatabaseConfig(
            host: environment["PGHOST"] ?? "127.0.0.1", port: port, username: user,
            password: password, database: environment["PGDATABASE"] ?? user,
            sslMode: environment["PGSSLMODE"] ?? "disable", schema: schema, poolSize: poolSize
        )
    }

    /// ``EnvironmentSecret/read(_:in:)`` with its error as this type's.
    private static func secret(_ name: String, in environment: [String: String]) throws -> String? {
        do {
            return try EnvironmentSecret.read(name, in: environment)
        } catch let error as EnvironmentSecret.Invalid {
            throw Invalid(description: error.description)
        }
    }

    /// Parses a `postgres://` URL.
    public static func parse(url text: String, schema: String) throws -> DatabaseConfig {
        guard let url = URLComponents(string: text), url.scheme == "postgres" || url.scheme == "postgresql" else {
            throw Invalid(description: "DATABASE_URL must look like postgres://user:password@host:port/database")
        }
        guard let user = url.user, !user.isEmpty else { throw Invalid(description: "DATABASE_URL has no user name") }
        let database = String(url.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw Invalid(description: "DATABASE_URL has no database name") }
        let sslMode = url.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable"
        return DatabaseConfig(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: url.password.map { $0.removingPercentEncoding ?? $0 }, database: database,
            sslMode: sslMode, schema: schema
        )
    }

    /// The postgres-nio client configuration.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "disable": tls = .disable
        case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        default: tls = .prefer(.makeClientConfiguration())
        }
        var config = PostgresClient.Configuration(host: host, port: port, username: username, password: password,
                                                  database: database, tls: tls)
        config.options.maximumConnections = poolSize
        config.options.minimumConnections = 0
        config.options.connectTimeout = connectTimeout
        // The server probes an idle connection after 30 s, every 10 s, and drops it after 3
        // unanswered probes: a service that vanished behind a partition stops holding its locks
        // within about a minute (the kernel's default is two hours).
        var parameters = [("search_path", schema), ("application_name", "chronir-\(schema)"),
                          ("tcp_keepalives_idle", "30"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "3")]
        if let statementTimeout {
            let ms = statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000
            parameters.append(("statement_timeout", "\(max(1, ms))"))
        }
        config.options.additionalStartupParameters = parameters
        return config
    }

    /// The URL form, password hidden, for logs.
    public var redacted: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database) (schema \(schema))"
    }
}

/// A secret setting, given either as its value (`NAME`) or as a file holding it (`NAME_FILE`:
/// a Docker or Kubernetes secret, so that the value is in no environment listing). The database
/// settings read theirs with it, and `ServiceEnvironment.secret(_:)` is it for every other
/// service setting.
public enum EnvironmentSecret {
    /// Why a secret could not be read: names the variable and the file, never the secret.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The value of `name`, or the content of the file `name_FILE` names without its trailing
    /// line break(s); nil when neither is set (an empty value counts as unset, as everywhere).
    /// Both set, a file that cannot be read, or an empty file is an error.
    public static func read(_ name: String, in environment: [String: String]) throws -> String? {
        let fileVariable = "\(name)_FILE"
        let direct = environment[name].flatMap { $0.isEmpty ? nil : $0 }
        let file = environment[fileVariable].flatMap { $0.isEmpty ? nil : $0 }
        switch (direct, file) {
        case (nil, nil):
            return nil
        case (.some, .some):
            throw Invalid("set \(name) or \(fileVariable), not both")
        case (.some(let value), nil):
            return value
        case (nil, .some(let path)):
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw Invalid("\(fileVariable)=\"\(path)\" cannot be read: \(error.localizedDescription)")
            }
            var value = Substring(text)
            while value.last?.isNewline == true { value.removeLast() }
            guard !value.isEmpty else { throw Invalid("\(fileVariable)=\"\(path)\" is empty") }
            return String(value)
        }
    }
}
