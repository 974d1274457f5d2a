import Foundation
import ServiceKit
import Testing

/// `KnownSettings`: the list of `CHRONIR_*` names the services read cannot go stale (every
/// `"CHRONIR_…"` literal of `Shared/` and `Services/` is in it), and a name set at start that no
/// service reads is reported, with the known name it likely misspells.
@Suite("Known settings: unknown CHRONIR_ names are reported")
struct KnownSettingsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The first capture of `pattern` at each match in every Swift file under `Shared/` and
    /// `Services/` but the list itself (`KnownSettings.swift`), with the files it is in.
    func literals(_ pattern: String) throws -> [String: Set<String>] {
        let regex = try Regex(pattern)
        var found: [String: Set<String>] = [:]
        for folder in ["Shared", "Services"] {
            let base = Self.root.appendingPathComponent(folder)
            guard let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in files where url.pathExtension == "swift" && url.lastPathComponent != "KnownSettings.swift" {
                let text = try String(contentsOf: url, encoding: .utf8)
                for match in text.matches(of: regex) {
                    guard let name = match.output[1].substring else { continue }
                    found[String(name), default: []].insert(url.path.replacingOccurrences(of: Self.root.path + "/", with: ""))
                }
            }
        }
        return found
    }

    @Test("every \"CHRONIR_…\" literal in Shared/ and Services/ is a known setting")
    func listIsComplete() throws {
        let read = try literals(#""(CHRONIR_[A-Z0-9_]+)""#)
        // The sources were found (a wrong root would pass vacuously).
        #expect(read.count > 100, "found only \(read.count) CHRONIR_ literals under \(Self.root.path)")
        for (name, files) in read.sorted(by: { $0.key < $1.key }) {
            #expect(KnownSettings.names.contains(name),
                    "\(name) (read in \(files.sorted().joined(separator: ", "))) is missing from KnownSettings.read (Shared/ServiceKit/Config/KnownSettings.swift)")
        }
    }

    @Test("every secret read with ServiceEnvironment.secret is listed as one, and its _FILE form is known")
    func secretsAreListed() throws {
        let secrets = try literals(#"secret\("(CHRONIR_[A-Z0-9_]+)"\)"#)
        #expect(!secrets.isEmpty)
        for (name, files) in secrets.sorted(by: { $0.key < $1.key }) {
            #expect(KnownSettings.secrets.contains(name),
                    "\(name) (a secret in \(files.sorted().joined(separator: ", "))) is missing from KnownSettings.secrets")
        }
        for name in KnownSettings.secrets {
            #expect(KnownSettings.names.contains(name) && KnownSettings.names.contains("\(name)_FILE"), "\(name)")
        }
        #expect(KnownSettings.names.contains("CHRONIR_KEY_ENCRYPTION_KEY_FILE"))
        #expect(KnownSettings.names.contains("CHRONIR_KEY_ENCRYPTION_KEY_PREVIOUS_FILE"))
    }

    @Test("names built from a service's name are known")
    func perService() {
        for name in ["CHRONIR_ALARMS_RPC", "CHRONIR_ACCOUNTS_EVENTS", "CHRONIR_SCHEDULER_REPLICAS", "CHRONIR_BILLING_RPC"] {
            #expect(KnownSettings.names.contains(name), "\(name)")
        }
        #expect(KnownSettings.unknown(in: ["CHRONIR_NOTIFICATIONS_RPC": "tcp://127.0.0.1:7104"]).isEmpty)
    }

    @Test("a misspelt name is reported with the name it likely means; known, tooling, test and empty ones are not")
    func misspelling() {
        let environment = [
            "CHRONIR_SMTP_ULR": "smtp://relay",           // two letters swapped
            "CHRONIR_LOG_LEVL": "debug",                  // one letter missing
            "CHRONIR_COMPLETELY_MADE_UP": "1",            // nothing close
            "CHRONIR_HTTP_PORT_FILE": "/run/port",        // no _FILE form
            "CHRONIR_LOG_LEVEL": "debug",                 // known
            "CHRONIR_OPS_TOKEN_FILE": "/run/secrets/ops", // a secret's _FILE form
            "CHRONIR_SERVICE": "alarms",                  // the image's
            "CHRONIR_TEST_SEED": "42",                    // the test harness's
            "CHRONIR_TYPO_BUT_EMPTY": "",                 // empty counts as unset
            "PATH": "/usr/bin",                           // not ours
        ]
        #expect(KnownSettings.unknown(in: environment) == [
            "CHRONIR_COMPLETELY_MADE_UP",
            "CHRONIR_HTTP_PORT_FILE (CHRONIR_HTTP_PORT is not a secret: it has no _FILE form)",
            "CHRONIR_LOG_LEVL (did you mean CHRONIR_LOG_LEVEL?)",
            "CHRONIR_SMTP_ULR (did you mean CHRONIR_SMTP_URL?)",
        ])
        #expect(KnownSettings.suggestion(for: "CHRONIR_OPS_TOKN") == "CHRONIR_OPS_TOKEN")
        #expect(KnownSettings.suggestion(for: "CHRONIR_FIRE_LEED") == "CHRONIR_FIRE_LEAD")
        #expect(KnownSettings.suggestion(for: "CHRONIR_SOMETHING_ELSE_ENTIRELY") == nil)
    }
}
