import Foundation
import Wire

/// The image types an alarm's photo may have (`chronir-api.md` §8.1), recognised from the bytes.
public enum PhotoType: String, Codable, Sendable, CaseIterable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case heic = "image/heic"

    /// The largest photo: 5 MiB (`chronir-api.md` §8.1); larger uploads get 413 `CA009`.
    public static let maxBytes = 5 << 20

    /// The file extension of the stored object.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .heic: "heic"
        }
    }

    /// The type the bytes hold, judged by their signature (JPEG's SOI marker, PNG's 8-byte
    /// signature, or an ISO-BMFF `ftyp` box with a HEIF brand), or nil for anything else.
    public static func sniff(_ bytes: some Collection<UInt8>) -> PhotoType? {
        let head = Array(bytes.prefix(32))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.count >= 12, Array(head[4..<8]) == Array("ftyp".utf8) {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            if ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand) { return .heic }
        }
        return nil
    }
}

/// An upload: the photo of alarm `id`, replacing any earlier one. The image travels as the
/// request's attachment (raw bytes in the frame after the envelope, ``EnvelopeHeader/attachment``);
/// a gateway from before attachments sends it in `base64` instead, which the alarms service still reads.
public struct PhotoUpload: Codable, Sendable {
    public var id: String
    public var contentType: PhotoType
    /// The image, base64-encoded, when it is not the attachment.
    public var base64: String?
    /// An upload whose bytes go as the attachment.
    public init(id: String, contentType: PhotoType) {
        self.id = id
        self.contentType = contentType
    }
    /// An upload carrying its bytes in base64 (the older form).
    public init(id: String, contentType: PhotoType, data: Data) {
        self.init(id: id, contentType: contentType)
        self.base64 = data.base64EncodedString()
    }
    /// The image's bytes in `base64`, or nil when it holds none or not valid base64.
    public var data: Data? { base64.flatMap { Data(base64Encoded: $0) } }
}

/// A read of alarm `id`'s photo; with `ifNoneMatch` equal to the current tag the answer
/// carries no bytes.
public struct PhotoFetch: Codable, Sendable {
    public var id: String
    public var ifNoneMatch: [String]?
    public init(id: String, ifNoneMatch: [String]? = nil) {
        self.id = id
        self.ifNoneMatch = ifNoneMatch
    }
}

/// A stored photo's description and, unless the caller already holds it, its bytes.
public struct PhotoContent: Codable, Sendable {
    public var etag: String
    public var contentType: PhotoType
    public var size: Int
    public var updatedAt: Date
    /// The image, base64-encoded; nil when the caller's `ifNoneMatch` named the current tag.
    public var base64: String?
    public init(etag: String, contentType: PhotoType, size: Int, updatedAt: Date, data: Data?) {
        self.etag = etag
        self.contentType = contentType
        self.size = size
        self.updatedAt = updatedAt
        self.base64 = data?.base64EncodedString()
    }
    /// The image's bytes, when sent.
    public var data: Data? { base64.flatMap { Data(base64Encoded: $0) } }
}

/// The photo requests of the alarms service. Their messages exceed the bus's usual 1 MiB:
/// the alarms service and the gateway's client to it accept ``maxMessageBytes`` per frame.
public enum PhotoMethods {
    /// A frame of a photo request or reply: a 5 MiB photo in base64 with its envelope (the
    /// reply of `get`, and an upload from a gateway that predates attachments).
    public static let maxMessageBytes = 8 << 20

    public struct Put: RPCMethod {
        public typealias Request = PhotoUpload
        public typealias Response = Alarm
        public static let type = "alarms.photo.put"
    }
    public struct Get: RPCMethod {
        public typealias Request = PhotoFetch
        public typealias Response = PhotoContent
        public static let type = "alarms.photo.get"
    }
    public struct Delete: RPCMethod {
        public typealias Request = AlarmRef
        public typealias Response = Alarm
        public static let type = "alarms.photo.delete"
    }
    /// Whether the actor may upload a photo to the alarm now (it exists, they may change it,
    /// its owner's plan includes photos): asked before the gateway reads an upload's body, so
    /// a refused upload costs no 5 MiB read, no base64 and no bus message. `Empty` when they may.
    public struct Check: RPCMethod {
        public typealias Request = AlarmRef
        public typealias Response = Empty
        public static let type = "alarms.photo.check"
    }
}
