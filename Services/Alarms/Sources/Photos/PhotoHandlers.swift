import AlarmsCore
import Contracts
import Crypto
import Foundation
import Messaging
import Outbox
import Persistence
import PostgresNIO

/// `alarms.photo.*`: one photo per alarm (`chronir-api.md` §8). Plus and Premium owners (and
/// in a group whoever its `alarmEditors` lets edit its alarms) upload and remove; the owner and every member the alarm is
/// shared with read; anyone else gets 404. The bytes go to the ``PhotoStorage`` first (under a
/// content-addressed key reserved for removal), then one transaction makes them the alarm's
/// photo, sets `photoURL` and records the change like any other edit.
struct PhotoHandlers: Sendable {
    let store: AlarmStore
    let photos: PhotoStore
    let storage: any PhotoStorage
    let changes: AlarmChanges
    let outbox: OutboxWriter
    /// How long stored bytes no commit claimed stay before the sweep removes them.
    var uploadGrace: Duration = .seconds(3600)
    /// Uploads one user may make per minute (`chronir-api.md` §13.3), over every replica.
    var uploadsPerMinute = 3
    /// The uploads this process stores at once (`CHRONIR_PHOTO_UPLOADS`).
    var uploads = BoundedSlots(limit: 8, refusal: "too many photo uploads in progress; try again in a moment", retryAfterSeconds: 2)

    var database: Database { store.database }

    func register(into router: inout RPCRouter) {
        router.on(PhotoMethods.Put.self) { req, ctx in
            guard let data = ctx.attachment ?? req.data else {
                throw ServiceError(.validationFailed, "the photo's bytes are missing: send them as the attachment (or valid base64 in base64)")
            }
            let actor = try ctx.requireActor()
            return try await uploads.run { try await put(req, data: data, actor: actor) }
        }
        router.on(PhotoMethods.Get.self) { req, ctx in try await get(req, actor: try ctx.requireActor()) }
        router.on(PhotoMethods.Delete.self) { req, ctx in try await delete(req, actor: try ctx.requireActor()) }
        router.on(PhotoMethods.Check.self) { req, ctx in
            let actor = try ctx.requireActor()
            _ = try await database.transaction { c in try await writable(req.id, actor: actor, upload: true, on: c) }
            return Empty()
        }
    }

    /// The path the gateway serves the photo at; the tag in the query changes with the photo,
    /// so a client caching by URL sees a new one (§8.2's cache key).
    static func url(alarm: String, etag: String) -> String { "/v1/alarms/\(alarm)/photo?v=\(etag.prefix(16))" }

    func put(_ req: PhotoUpload, data: Data, actor: String) async throws -> Alarm {
        guard !data.isEmpty else { throw ServiceError(.validationFailed, "the photo is empty") }
        guard data.count <= PhotoType.maxBytes else {
            throw ServiceError(.photoTooLarge, "a photo holds at most \(PhotoType.maxBytes) bytes; this one has \(data.count)")
        }
        guard let type = PhotoType.sniff(data), type == req.contentType else {
            throw ServiceError(.unsupportedMediaType, "the bytes are not \(req.contentType.rawValue) (JPEG, PNG and HEIC are taken)")
        }
        // Refuse before storing anything; the transaction checks again under the row lock. An
        // upload counts against the uploader's 3 a minute (§13.3) from here, stored or not.
        let owner = try await database.transaction { c in
            let owner = try await writable(req.id, actor: actor, upload: true, on: c).ownerId
            try await photos.admitUpload(by: actor, perMinute: uploadsPerMinute, on: c)
            return owner
        }
        let etag = SigV4.hex(SHA256.hash(data: data)).prefix(32)
        let row = PhotoStore.Row(key: "users/\(owner)/alarms/\(req.id)/photo-\(etag).\(type.fileExtension)", type: type,
                                 etag: String(etag), size: data.count, updatedAt: Date())
        try await photos.reserve(row.key, grace: uploadGrace)
        try await storage.put(key: row.key, data: data, type: type)
        let updated: Alarm = try await outbox.transaction { c in
            let a = try await writable(req.id, actor: actor, upload: true, on: c)
            let old = try await photos.lockPhoto(of: a.id, on: c)
            try await photos.set(row, alarm: a.id, owner: a.ownerId, replacing: old, on: c)
            return try await changed(a, photoURL: Self.url(alarm: a.id, etag: row.etag), actor: actor, on: c)
        }
        return updated
    }

    func get(_ req: PhotoFetch, actor: String) async throws -> PhotoContent {
        guard let alarm = try await store.load(req.id), alarm.isVisible(to: actor), alarm.deletedAt == nil else {
            throw AlarmHandlers.notFound(req.id)
        }
        guard let row = try await photos.photo(of: alarm.id) else { throw ServiceError(.notFound, "alarm \(req.id) has no photo") }
        let content = PhotoContent(etag: row.etag, contentType: row.type, size: row.size, updatedAt: row.updatedAt, data: nil)
        if let seen = req.ifNoneMatch, seen.contains(row.etag) || seen.contains("*") { return content }
        guard let data = try await storage.get(key: row.key) else {
            throw ServiceError(.internalError, "the bytes of alarm \(req.id)'s photo are missing from \(storage.name)")
        }
        return PhotoContent(etag: row.etag, contentType: row.type, size: row.size, updatedAt: row.updatedAt, data: data)
    }

    func delete(_ ref: AlarmRef, actor: String) async throws -> Alarm {
        let updated: Alarm = try await outbox.transaction { c in
            let a = try await writable(ref.id, actor: actor, upload: false, on: c)
            try AlarmHandlers.checkVersion(ref.version, a)
            guard let row = try await photos.lockPhoto(of: a.id, on: c) else { throw ServiceError(.notFound, "alarm \(ref.id) has no photo") }
            try await photos.remove(row, alarm: a.id, on: c)
            return try await changed(a, photoURL: nil, actor: actor, on: c)
        }
        return updated
    }

    /// Locks alarm `id` for a change of its photo by `actor`: its owner, or in a group whoever
    /// the group lets edit its alarms (`alarmEditors`: a photo is part of the alarm, so the same
    /// people change it as change its title), and for an upload an owner on Plus or Premium.
    private func writable(_ id: String, actor: String, upload: Bool, on c: PostgresConnection) async throws -> Alarm {
        guard let a = try await store.lock(id, on: c), a.isVisible(to: actor), a.deletedAt == nil else { throw AlarmHandlers.notFound(id) }
        var allowed = a.ownerId == actor
        if !allowed, let g = a.groupId {
            allowed = try await store.mayEditGroupAlarms(group: g, user: actor, on: c) ?? false
        }
        guard allowed else { throw ServiceError(.permissionDenied, "only the owner, or those its group lets edit its alarms, change the photo of alarm \(id)") }
        if upload {
            // The owner's own refusal says when a lapsed subscription is why (CA013); a group
            // admin is told it is the owner's plan (CA002).
            let standing = try await store.tierStanding(of: a.ownerId, on: c)
            if a.ownerId == actor {
                try standing.require(.plus, "photo attachments need Plus")
            } else if standing.tier < .plus {
                throw ServiceError(.tierRequired, "photo attachments need Plus: the plan of the alarm's owner does not include them")
            }
        }
        return a
    }

    private func changed(_ a: Alarm, photoURL: String?, actor: String, on c: PostgresConnection) async throws -> Alarm {
        // The alarm is locked already (`writable`): revised as it was read under that lock.
        try await changes.revise(locked: a, actor: actor, on: c) { $0.photoURL = photoURL }.after
    }
}
