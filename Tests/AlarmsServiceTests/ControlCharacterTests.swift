import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Issue 57: text people type reaches mail subjects, pushes and logs; CR LF and other control
/// characters are refused where it enters, sent as an attacker sends them.
extension AlarmsAPITests {
    @Test("display names, group names and alarm titles with CR LF, NUL, ESC or U+0085 are 400 CA016 naming the field; notes keep their line breaks; nothing was stored")
    func controlCharacters() async throws {
        try await withSuite { s in
            let injected = "x\r\n.\r\nMAIL FROM:<evil@example.com>"
            let signup = try await s.request(.POST, "/v1/auth/signup",
                                             json: ["email": "cc-\(UInt32.random(in: 0...UInt32.max))@example.com", "password": "correct horse",
                                                    "displayName": injected])
            #expect(signup.status == 400 && signup.code == "CA016", "\(signup.status) \(signup.text)")
            #expect(signup.text.contains("displayName"), "\(signup.text)")

            let u = try await s.signup("Typist")
            for name in [injected, "bell\u{7}", "esc\u{1b}[31m", "n\u{85}el"] {
                let patch = try await s.request(.PATCH, "/v1/me", token: u.token, json: ["displayName": name])
                #expect(patch.status == 400 && patch.code == "CA016", "\(name.debugDescription): \(patch.status) \(patch.text)")
                let alarm = try await create(s, u, ["title": name])
                #expect(alarm.status == 400 && alarm.code == "CA016" && alarm.text.contains("title"), "\(name.debugDescription): \(alarm.text)")
            }
            #expect(try await s.request(.GET, "/v1/me", token: u.token).json["displayName"]?.stringValue == "Typist")
            _ = try await s.setTier(u, "premium")
            let group = try await s.request(.POST, "/v1/groups", token: u.token, json: ["name": "Home\r\nBcc: all@example.com", "iconName": "house"])
            #expect(group.status == 400 && group.code == "CA016" && group.text.contains("name"), "\(group.status) \(group.text)")
            let note = try await create(s, u, ["note": "first line\nsecond line"])
            #expect(note.status == 201, "\(note.text)")
            #expect(note.json["note"]?.stringValue == "first line\nsecond line")
            let badNote = try await create(s, u, ["note": "nul\u{0}"])
            #expect(badNote.status == 400 && badNote.code == "CA016", "\(badNote.text)")
        }
    }
}
