import Foundation

/// One alarm tone of the bundled library (US-7.2): the apps ship the audio; the server keeps
/// the catalogue so that every device and tier agrees on what an alarm's `soundId` may be.
public struct Sound: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// The lowest tier that may choose it.
    public var tier: Tier
    /// Whether the caller's tier may choose it (answered per caller by `GET /v1/sounds`).
    public var available: Bool

    public init(id: String, name: String, tier: Tier, available: Bool = true) {
        self.id = id
        self.name = name
        self.tier = tier
        self.available = available
    }

    /// The library: two tones on Free (US-7.2 "2 default sounds"), the rest with Plus
    /// (`chronir-api.md` and the user stories win over the technical spec's "3 built-in").
    public static let catalogue: [Sound] = [
        Sound(id: "default", name: "Chronir", tier: .free),
        Sound(id: "gentle_chime", name: "Gentle chime", tier: .free),
        Sound(id: "classic_bell", name: "Classic bell", tier: .plus),
        Sound(id: "rising_tone", name: "Rising tone", tier: .plus),
        Sound(id: "birdsong", name: "Birdsong", tier: .plus),
        Sound(id: "digital_pulse", name: "Digital pulse", tier: .plus),
        Sound(id: "soft_marimba", name: "Soft marimba", tier: .plus),
        Sound(id: "ocean_wave", name: "Ocean wave", tier: .plus),
    ]

    /// The catalogue entry of `id`, nil when there is none.
    public static func named(_ id: String) -> Sound? { catalogue.first { $0.id == id } }
}

/// `GET /v1/sounds`: the catalogue, with what the caller's tier may choose.
public struct SoundList: Codable, Sendable, Equatable {
    public var sounds: [Sound]
    /// The caller's tier.
    public var tier: Tier
    public init(sounds: [Sound], tier: Tier) {
        self.sounds = sounds
        self.tier = tier
    }
}
