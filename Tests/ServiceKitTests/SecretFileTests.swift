import Foundation
import Persistence
import ServiceKit
import Testing

/// Every secret setting takes a `_FILE` form (`ServiceEnvironment.secret`, and the database's
/// `DATABASE_URL_FILE` / `PGPASSWORD_FILE` through `EnvironmentSecret`): the value, or the
/// content of the file, never both; a file that cannot be read or is empty stops the start with
/// a message naming the variable and the path, never the secret.
@Suite("Secrets: NAME or NAME_FILE")
struct SecretFileTests {
    /// A new file in the temporary directory holding `content`; its path.
    func file(_ content: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)")
        try Data(content.utf8).write(to: url)
        return url.path
    }

    /// The description of what `body` throws; nil when it throws nothing.
    func failure<T>(_ body: () throws -> T) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test("the value itself; nil when neither form is set (an empty value counts as unset)")
    func value() throws {
        #expect(try ServiceEnvironment(["CHRONIR_OPS_TOKEN": "0123456789abcdef"]).secret("CHRONIR_OPS_TOKEN") == "0123456789abcdef")
        #expect(try ServiceEnvironment([:]).secret("CHRONIR_OPS_TOKEN") == nil)
        #expect(try ServiceEnvironment(["CHRONIR_OPS_TOKEN": "", "CHRONIR_OPS_TOKEN_FILE": ""]).secret("CHRONIR_OPS_TOKEN") == nil)
    }

    @Test("the _FILE form: the file's content without its trailing line breaks")
    func fromFile() throws {
        let path = try file("s3cr3t value\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try ServiceEnvironment(["CHRONIR_WEBHOOK_SECRET_FILE": path]).secret("CHRONIR_WEBHOOK_SECRET") == "s3cr3t value")
        let crlf = try file("line one\nline two\r\n\n")
        defer { try? FileManager.default.removeItem(atPath: crlf) }
        #expect(try ServiceEnvironment(["CHRONIR_SMTP_URL_FILE": crlf]).secret("CHRONIR_SMTP_URL") == "line one\nline two")
        // An empty direct value does not count: the file is used.
        #expect(try ServiceEnvironment(["CHRONIR_SMTP_URL": "", "CHRONIR_SMTP_URL_FILE": path]).secret("CHRONIR_SMTP_URL") == "s3cr3t value")
    }

    @Test("both forms set: refused, naming both")
    func both() throws {
        let path = try file("from the file\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = ServiceEnvironment(["CHRONIR_OPS_TOKEN": "from the value", "CHRONIR_OPS_TOKEN_FILE": path])
        #expect(throws: ServiceEnvironment.Invalid.self) { _ = try env.secret("CHRONIR_OPS_TOKEN") }
        let message = try #require(failure { try env.secret("CHRONIR_OPS_TOKEN") })
        #expect(message == "set CHRONIR_OPS_TOKEN or CHRONIR_OPS_TOKEN_FILE, not both")
        #expect(!message.contains("from the value") && !message.contains("from the file"))
    }

    @Test("a file that cannot be read: refused, naming the variable and the path")
    func unreadable() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-secret-\(UUID().uuidString)").path
        let env = ServiceEnvironment(["CHRONIR_S3_SECRET_ACCESS_KEY_FILE": missing])
        #expect(throws: ServiceEnvironment.Invalid.self) { _ = try env.secret("CHRONIR_S3_SECRET_ACCESS_KEY") }
        let message = try #require(failure { try env.secret("CHRONIR_S3_SECRET_ACCESS_KEY") })
        #expect(message.contains("CHRONIR_S3_SECRET_ACCESS_KEY_FILE"), "\(message)")
        #expect(message.contains(missing), "\(message)")
        // A directory is not a file either.
        let directory = ServiceEnvironment(["CHRONIR_S3_SECRET_ACCESS_KEY_FILE": FileManager.default.temporaryDirectory.path])
        #expect(throws: ServiceEnvironment.Invalid.self) { _ = try directory.secret("CHRONIR_S3_SECRET_ACCESS_KEY") }
    }

    @Test("an empty file (or one holding only a line break): refused")
    func empty() throws {
        for content in ["", "\n", "\r\n\n"] {
            let path = try file(content)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let env = ServiceEnvironment(["CHRONIR_PLAY_PUSH_TOKEN_FILE": path])
            let message = try #require(failure { try env.secret("CHRONIR_PLAY_PUSH_TOKEN") }, "content \(content.debugDescription)")
            #expect(message.contains("CHRONIR_PLAY_PUSH_TOKEN_FILE") && message.contains(path) && message.contains("empty"), "\(message)")
        }
    }

    @Test("the database: DATABASE_URL_FILE and PGPASSWORD_FILE, with the same rules")
    func database() throws {
        let url = try file("postgres://chronir:db-pass@db.internal:5433/chronir?sslmode=require\n")
        defer { try? FileManager.default.removeItem(atPath: url) }
        let config = try DatabaseConfig.fromEnvironment(["DATABASE_URL_FILE": url], defaultSchema: "alarms")
        #expect(config.host == "db.internal")
        #expect(config.port == 5433)
        #expect(config.username == "chronir")
        #expect(config.password == "db-pass")
        #expect(config.database == "chronir")
        #expect(config.sslMode == "require")
        #expect(config.schema == "alarms")

        let both = failure { try DatabaseConfig.fromEnvironment(["DATABASE_URL": "postgres://a@b/c", "DATABASE_URL_FILE": url], defaultSchema: "alarms") }
        #expect(both == "set DATABASE_URL or DATABASE_URL_FILE, not both")
        let empty = try file("\n")
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let emptyMessage = try #require(failure { try DatabaseConfig.fromEnvironment(["DATABASE_URL_FILE": empty], defaultSchema: "alarms") })
        #expect(emptyMessage.contains("DATABASE_URL_FILE") && emptyMessage.contains("empty"), "\(emptyMessage)")
        let missing = url + ".missing"
        let missingMessage = try #require(failure { try DatabaseConfig.fromEnvironment(["DATABASE_URL_FILE": missing], defaultSchema: "alarms") })
        #expect(missingMessage.contains("DATABASE_URL_FILE") && missingMessage.contains(missing), "\(missingMessage)")

        let password = try file("pg-secret\n")
        defer { try? FileManager.default.removeItem(atPath: password) }
        let pg = try DatabaseConfig.fromEnvironment(["PGUSER": "chronir", "PGHOST": "db", "PGPASSWORD_FILE": password], defaultSchema: "billing")
        #expect(pg.password == "pg-secret")
        #expect(pg.host == "db")
        #expect(!pg.redacted.contains("pg-secret"))
    }
}
