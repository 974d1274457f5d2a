import Foundation
import Support
@testable import SuiteSupport
import Testing

/// Lists a user can grow are bounded: what one request returns or one fire fans out to.
extension PublicInputTests {
    @Test("an account registers at most 20 devices: the 21st is 400 CA016; re-registering one and registering after a removal work")
    func deviceCap() async throws {
        try await withSuite { s in
            let u = try await s.signup("Gadgets")
            for i in 0..<20 {
                let r = try await s.request(.PUT, "/v1/me/devices/d\(i)", token: u.token, json: ["platform": "ios", "pushToken": "t\(i)"])
                #expect(r.status == 200 || r.status == 201, "\(r.text)")
            }
            let over = try await s.request(.PUT, "/v1/me/devices/d20", token: u.token, json: ["platform": "ios", "pushToken": "t20"])
            #expect(over.status == 400, "\(over.text)")
            #expect(over.code == "CA016")
            // An update of a registered device is not a new one.
            let again = try await s.request(.PUT, "/v1/me/devices/d3", token: u.token, json: ["platform": "ios", "pushToken": "new"])
            #expect(again.status == 200, "\(again.text)")
            #expect(try await s.request(.DELETE, "/v1/me/devices/d0", token: u.token).status == 204)
            let after = try await s.request(.PUT, "/v1/me/devices/d20", token: u.token, json: ["platform": "ios", "pushToken": "t20"])
            #expect(after.status == 200 || after.status == 201, "\(after.text)")
            let list = try await s.request(.GET, "/v1/me/devices", token: u.token)
            #expect(list.json["devices"]?.arrayValue?.count == 20, "\(list.text)")
        }
    }
}
