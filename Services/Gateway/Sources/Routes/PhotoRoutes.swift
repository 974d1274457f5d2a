import Contracts
import Foundation
import Hummingbird
import Messaging

/// `/v1/alarms/{id}/photo`: the alarm's photo as raw bytes (`chronir-api.md` §8). The body's
/// size and type are checked here, before anything crosses the bus: over 5 MiB is 413
/// `CA009`; a `Content-Type` other than JPEG, PNG or HEIC, or bytes that are not what it
/// says, is 415 `CA032`. An upload is checked (``PhotoMethods/Check``) before its body is
/// read, and at most `CHRONIR_PHOTO_UPLOADS` bodies are held at once per process, of which
/// `CHRONIR_PHOTO_UPLOADS_PER_ACCOUNT` for one account.
enum PhotoRoutes {
    static func add(to router: Router<GatewayContext>, gateway g: Gateway, concurrentUploads: Int, uploadsPerAccount: Int = 2) {
        let uploads = BoundedSlots(limit: concurrentUploads, refusal: "too many photo uploads in progress; try again in a moment", retryAfterSeconds: 2)
        let perAccount = PerAccountSlots(limit: uploadsPerAccount, refusal: "this account already has photo uploads in progress; finish one first")
        router.put("/v1/alarms/:id/photo") { request, context in
            let caller = try await g.caller(request)
            let id = try context.parameters.require("id")
            let declared = request.headers[.contentType].map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased() }
            guard let declared, let type = PhotoType(rawValue: declared) else {
                throw ServiceError(.unsupportedMediaType, "Content-Type must be image/jpeg, image/png or image/heic")
            }
            // Who may upload is asked before a byte of the body is read: an anonymous or Free
            // account, another's alarm, a made-up id cost one small request, not 5 MiB.
            let ref = try JSONCoding.encode(AlarmRef(id: id, version: nil))
            _ = try await g.call(PhotoMethods.Check.self, g.clients.alarms, payload: ref, caller: caller)
            // At most `perAccount.limit` bodies per account (429 past it), so one account cannot
            // hold the process's `uploads.limit` (503 past it).
            try perAccount.enter(caller.uid)
            defer { perAccount.leave(caller.uid) }
            try uploads.enter()
            defer { uploads.leave() }
            let data = try await body(request)
            guard PhotoType.sniff(data) == type else {
                throw ServiceError(.unsupportedMediaType, "the body is not \(type.rawValue): its bytes do not carry that format's signature")
            }
            // The bytes go as they came, in a frame of their own: no base64, no JSON around them.
            let payload = try JSONCoding.encode(PhotoUpload(id: id, contentType: type))
            let reply = try await g.call(PhotoMethods.Put.self, g.clients.alarms, payload: payload, caller: caller, attachment: data)
            return try AlarmRoutes.alarmResponse(try JSONCoding.decoder().decode(Alarm.self, from: reply), status: .ok)
        }
        router.get("/v1/alarms/:id/photo") { request, context in
            let caller = try await g.caller(request)
            let fetch = PhotoFetch(id: try context.parameters.require("id"), ifNoneMatch: request.headers[.ifNoneMatch].map(tags))
            let reply = try await g.call(PhotoMethods.Get.self, g.clients.alarms, payload: JSONCoding.encode(fetch), caller: caller)
            let photo = try JSONCoding.decoder().decode(PhotoContent.self, from: reply)
            var headers: HTTPFields = [.eTag: "\"\(photo.etag)\"", .cacheControl: "private, max-age=300",
                                       .lastModified: httpDate(photo.updatedAt)]
            guard let data = photo.data else { return Response(status: .notModified, headers: headers) }
            headers[.contentType] = photo.contentType.rawValue
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
        }
        router.delete("/v1/alarms/:id/photo") { request, context in
            let caller = try await g.caller(request)
            let ref = AlarmRef(id: try context.parameters.require("id"), version: try AlarmRoutes.ifMatch(request))
            let reply = try await g.call(PhotoMethods.Delete.self, g.clients.alarms, payload: JSONCoding.encode(ref), caller: caller)
            return try AlarmRoutes.alarmResponse(try JSONCoding.decoder().decode(Alarm.self, from: reply), status: .ok)
        }
    }

    /// The raw body, at most ``PhotoType/maxBytes``, else 413 `CA009`.
    static func body(_ request: Request) async throws -> Data {
        var request = request
        let limit = PhotoType.maxBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw ServiceError(.photoTooLarge, "a photo holds at most \(limit) bytes; this body has \(length)")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch {
            throw ServiceError(.photoTooLarge, "a photo holds at most \(limit) bytes")
        }
        guard buffer.readableBytes > 0 else { throw ServiceError(.validationFailed, "the body is empty: send the image's bytes") }
        return Data(buffer: buffer)
    }

    /// The entity tags of an `If-None-Match` header, without quotes or `W/`.
    static func tags(_ header: String) -> [String] {
        header.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "").trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
    }

    static func httpDate(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return f.string(from: date)
    }
}
