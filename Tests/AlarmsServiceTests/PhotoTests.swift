@testable import AlarmsService
import AsyncHTTPClient
import Foundation
import Messaging
import NIOCore
import PostgresNIO
import Support
@testable import SuiteSupport
import Testing

/// Photo attachments (`chronir-api.md` §8) through the HTTP API, on the embedded storage and on
/// a local S3-compatible server (moto), and the request signing checked against botocore.
@Suite("Photos")
struct PhotoTests {
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data((0..<2000).map { UInt8($0 % 251) })
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + Data((0..<3000).map { UInt8($0 % 241) })
    static let heic = Data([0, 0, 0, 0x18]) + Data("ftypheic".utf8) + Data(count: 1000)
    static let gif = Data("GIF89a".utf8) + Data(count: 500)

    func put(_ s: TestSuite, _ alarm: String, _ token: String, _ bytes: Data, type: String) async throws -> HTTPResult {
        try await s.request(.PUT, "/v1/alarms/\(alarm)/photo", token: token, bytes: bytes, headers: ["Content-Type": type])
    }

    func alarm(_ s: TestSuite, _ token: String) async throws -> String {
        let body: [String: Any] = ["title": "Water the ficus", "schedule": scheduleJSON("weekly", day: 2)]
        let r = try await s.request(.POST, "/v1/alarms", token: token, json: body)
        return try #require(r.json["id"]?.stringValue, "\(r.text)")
    }

    /// The cases every storage must pass: tier, type, size, who reads, tags, replacement,
    /// removal with the photo, the alarm and the account. `objects` counts stored objects.
    func exercise(_ s: TestSuite, objects: @escaping @Sendable () async throws -> Int) async throws {
        let owner = try await s.signup("Owner")
        let member = try await s.signup("Member")
        let stranger = try await s.signup("Stranger")
        // Free: refused. Plus: taken.
        let freeAlarm = try await alarm(s, stranger.token)
        let free = try await put(s, freeAlarm, stranger.token, Self.png, type: "image/png")
        #expect(free.status == 403 && free.json["code"]?.stringValue == "CA002", "\(free.text)")
        let plus = try await s.signup("Plus")
        _ = try await s.setTier(plus, "plus")
        let plusAlarm = try await alarm(s, plus.token)
        let taken = try await put(s, plusAlarm, plus.token, Self.png, type: "image/png")
        #expect(taken.status == 200, "\(taken.text)")
        #expect(await eventually { (try? await objects()) == 1 })
        #expect(try await s.request(.DELETE, "/v1/alarms/\(plusAlarm)/photo", token: plus.token).status == 200)
        #expect(await eventually { (try? await objects()) == 0 })
        // Sharing needs Premium: the owner of the shared alarm has it.
        _ = try await s.setTier(owner, "premium")
        let id = try await alarm(s, owner.token)
        try await s.share(id, owner: owner, with: [member])

        // Types are judged from the bytes.
        let gif = try await put(s, id, owner.token, Self.gif, type: "image/gif")
        #expect(gif.status == 415 && gif.json["code"]?.stringValue == "CA032", "\(gif.text)")
        let lying = try await put(s, id, owner.token, Self.png, type: "image/jpeg")
        #expect(lying.status == 415 && lying.json["code"]?.stringValue == "CA032", "\(lying.text)")
        let disguised = try await put(s, id, owner.token, Self.gif, type: "image/png")
        #expect(disguised.status == 415, "\(disguised.text)")
        #expect(try await put(s, id, owner.token, Data(), type: "image/png").status == 400)

        // Size: 5 MiB is taken (it crosses the bus as one message), one byte more is 413 CA009.
        let largest = Data([0xFF, 0xD8, 0xFF, 0xE1]) + Data((0..<(5 << 20) - 4).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let big = try await put(s, id, owner.token, largest, type: "image/jpeg")
        #expect(big.status == 200, "\(big.text.prefix(300))")
        let tooBig = try await put(s, id, owner.token, largest + Data([0]), type: "image/jpeg")
        #expect(tooBig.status == 413 && tooBig.json["code"]?.stringValue == "CA009", "\(tooBig.text)")
        let bigRead = try await s.request(.GET, "/v1/alarms/\(id)/photo", token: member.token)
        #expect(bigRead.status == 200 && bigRead.body == largest)

        // A PNG replaces it; the alarm names it and moves to a new version.
        let stored = try await put(s, id, owner.token, Self.png, type: "image/png")
        #expect(stored.status == 200, "\(stored.text)")
        let url = try #require(stored.json["photoURL"]?.stringValue)
        #expect(url.hasPrefix("/v1/alarms/\(id)/photo?v="))
        #expect(try await s.request(.GET, "/v1/alarms/\(id)", token: owner.token).json["photoURL"]?.stringValue == url)
        // The replaced photo's bytes leave the storage.
        #expect(await eventually { (try? await objects()) == 1 }, "the replaced 5 MiB photo was not removed")

        // Owner and shared member read it with its tag; a stranger learns nothing.
        let read = try await s.request(.GET, url, token: owner.token)
        #expect(read.status == 200 && read.body == Self.png)
        #expect(read.header("Content-Type") == "image/png")
        #expect(read.header("Cache-Control")?.contains("private") == true)
        let etag = try #require(read.header("ETag"))
        #expect(try await s.request(.GET, "/v1/alarms/\(id)/photo", token: owner.token, headers: ["If-None-Match": etag]).status == 304)
        #expect(try await s.request(.GET, "/v1/alarms/\(id)/photo", token: member.token).body == Self.png)
        let peek = try await s.request(.GET, "/v1/alarms/\(id)/photo", token: stranger.token)
        #expect(peek.status == 404, "\(peek.text)")
        #expect(try await s.request(.GET, "/v1/alarms/\(id)/photo").status == 401)
        // Members read but do not write; strangers get 404 for writes too.
        #expect(try await put(s, id, member.token, Self.jpeg, type: "image/jpeg").status == 403)
        #expect(try await put(s, id, stranger.token, Self.jpeg, type: "image/jpeg").status == 404)
        #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/photo", token: stranger.token).status == 404)

        // JPEG and HEIC replace it; the tag changes with the bytes.
        #expect(try await put(s, id, owner.token, Self.jpeg, type: "image/jpeg").status == 200)
        let heic = try await put(s, id, owner.token, Self.heic, type: "image/heic")
        #expect(heic.status == 200, "\(heic.text)")
        let afterHeic = try await s.request(.GET, "/v1/alarms/\(id)/photo", token: member.token, headers: ["If-None-Match": etag])
        #expect(afterHeic.status == 200 && afterHeic.body == Self.heic && afterHeic.header("Content-Type") == "image/heic")
        #expect(await eventually { (try? await objects()) == 1 })

        // Removing the photo: the alarm forgets it, reads are 404, the bytes go.
        let removed = try await s.request(.DELETE, "/v1/alarms/\(id)/photo", token: owner.token)
        #expect(removed.status == 200 && removed.json["photoURL"] == .null, "\(removed.text)")
        #expect(try await s.request(.GET, "/v1/alarms/\(id)/photo", token: owner.token).status == 404)
        #expect(try await s.request(.DELETE, "/v1/alarms/\(id)/photo", token: owner.token).status == 404)
        #expect(await eventually { (try? await objects()) == 0 })

        // Deleting the alarm deletes its photo.
        #expect(try await put(s, id, owner.token, Self.png, type: "image/png").status == 200)
        #expect(try await s.request(.DELETE, "/v1/alarms/\(id)", token: owner.token).status == 204)
        #expect(try await s.request(.GET, "/v1/alarms/\(id)/photo", token: owner.token).status == 404)
        #expect(await eventually { (try? await objects()) == 0 }, "a deleted alarm's photo stayed")

        // Deleting the account deletes its photos.
        let other = try await alarm(s, owner.token)
        #expect(try await put(s, other, owner.token, Self.jpeg, type: "image/jpeg").status == 200)
        #expect(await eventually { (try? await objects()) == 1 })
        #expect(try await s.request(.DELETE, "/v1/me", token: owner.token).status == 204)
        #expect(await eventually(timeout: .seconds(20)) { (try? await objects()) == 0 }, "a deleted account's photo stayed")
    }

    @Test("photos on the embedded storage: tier, type from the bytes, 5 MiB, owner and members read, strangers 404, ETag, replacement and every deletion")
    func embedded() async throws {
        try await withTestSuite(label: "photos", start: { s in
            try s.startCore(alarmsExtra: ["CHRONIR_PHOTO_SWEEP": "200ms", "CHRONIR_PHOTO_UPLOADS_PER_MINUTE": "100"])
            try s.startInvitations()
        }) { s in
            try await exercise(s) {
                try await s.inDatabase("alarms") { db in
                    try await db.query("SELECT count(*)::int FROM photo_blobs").first(Int.self) ?? -1
                }
            }
        }
    }

    @Test("photos in an S3-compatible bucket (moto): the same cases, objects created and removed in the bucket")
    func s3() async throws {
        let port = freePort()
        let python = ProcessInfo.processInfo.environment["CHRONIR_TEST_PYTHON"] ?? "/usr/bin/python3"
        let moto = try TestProcess(url: URL(fileURLWithPath: python), ["-m", "moto.server", "-H", "127.0.0.1", "-p", "\(port)"], label: "moto")
        defer { moto.kill9() }
        let endpoint = "http://127.0.0.1:\(port)"
        let http = HTTPClient.shared
        #expect(await eventually(timeout: .seconds(30)) {
            (try? await http.execute(HTTPClientRequest(url: endpoint + "/"), timeout: .seconds(2)))?.status.code == 200
        }, "moto did not start")
        try await withTestSuite(label: "photos_s3", start: { s in
            try s.startCore(alarmsExtra: ["CHRONIR_PHOTO_SWEEP": "200ms", "CHRONIR_PHOTO_UPLOADS_PER_MINUTE": "100", "CHRONIR_S3_ENDPOINT": endpoint, "CHRONIR_S3_BUCKET": "chronir-test",
                                          "CHRONIR_S3_ACCESS_KEY_ID": "testing", "CHRONIR_S3_SECRET_ACCESS_KEY": "testing-secret"])
            try s.startInvitations()
        }) { s in
            try await exercise(s) {
                // The bucket's listing (moto answers it without credentials).
                let r = try await http.execute(HTTPClientRequest(url: endpoint + "/chronir-test?list-type=2"), timeout: .seconds(5))
                let xml = String(buffer: try await r.body.collect(upTo: 1 << 20))
                guard r.status.code == 200 else { return -1 }
                return xml.components(separatedBy: "<Key>").count - 1
            }
        }
    }

    @Test("SigV4: the worked example of AWS's documentation, and botocore's signature of a photo upload")
    func signatures() async throws {
        let example = SigV4(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
        let day = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
        let empty = SigV4.payloadHash(Data())
        let signed = example.sign(method: "GET", path: "/test.txt", headers: [("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9")],
                                  payloadSHA256: empty, date: day)
        let auth = try #require(signed.first { $0.0 == "Authorization" }?.1)
        #expect(auth == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")

        // A PUT like the photo storage sends, signed by botocore too.
        let signer = SigV4(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "s3cr3t/Key+value", region: "eu-central-1")
        let when = Date(timeIntervalSince1970: 1_795_000_000)
        let hash = SigV4.payloadHash(Self.jpeg)
        let path = "/chronir-photos/users/0193a1b2-uid/alarms/0193-alarm/photo-abc123.jpg"
        let ours = try #require(signer.sign(method: "PUT", path: path, headers: [("Content-Type", "image/jpeg"), ("host", "127.0.0.1:9000")],
                                            payloadSHA256: hash, date: when).first { $0.0 == "Authorization" }?.1)
        let amzDate = try #require(signer.sign(method: "PUT", path: path, headers: [("host", "x")], payloadSHA256: hash, date: when).first { $0.0 == "x-amz-date" }?.1)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = ProcessInfo.processInfo.environment["CHRONIR_TEST_PYTHON"] ?? "/usr/bin/python3"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [root.appendingPathComponent("scripts/sigv4_check.py").path, "PUT", "http://127.0.0.1:9000" + path, amzDate, hash,
                             "AKIDEXAMPLE", "s3cr3t/Key+value", "eu-central-1", "Content-Type:image/jpeg"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == ours)
    }
}
