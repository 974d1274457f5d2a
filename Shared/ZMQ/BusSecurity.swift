import Foundation

/// Who is who on the bus: this process's principal (`accounts`, `gateway`, `operator`, …) and
/// CURVE key pair, and the public key of every principal it trusts.
///
/// A context built with a `BusSecurity` encrypts every TCP socket with CurveZMQ. Servers (the
/// sockets that bind) accept only clients whose public key is listed here (a ZAP handler
/// checks each handshake) and learn the client's principal from the ZAP `User-Id` of each
/// message; clients authenticate the server by its listed public key.
public struct BusSecurity: Sendable {
    /// This process's principal: the service name, or `operator` for `chronirctl`.
    public let principal: String
    /// This process's long-term key pair.
    public let keys: CurveKeyPair
    /// Every trusted principal's public key (Z85), by principal: the key clients use to reach it
    /// as a server (the first of its listed keys).
    public let publicKeys: [String: String]
    /// Every key accepted for each principal: its current key first, then keys also accepted
    /// while it is rotated (a key file may list several).
    public let acceptedKeys: [String: [String]]
    private let principalsByKey: [Data: String]

    /// A configuration error: a missing or malformed key.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// Builds the table; throws when a public key is not 40 characters of Z85.
    public init(principal: String, keys: CurveKeyPair, publicKeys: [String: String]) throws {
        try self.init(principal: principal, keys: keys, acceptedKeys: publicKeys.mapValues { [$0] })
    }

    /// Builds the table from each principal's accepted keys (current first); throws when a key
    /// is not 40 characters of Z85 or two principals share one.
    public init(principal: String, keys: CurveKeyPair, acceptedKeys: [String: [String]]) throws {
        self.principal = principal
        self.keys = keys
        var accepted = acceptedKeys.filter { !$0.value.isEmpty }
        let own = accepted[principal] ?? []
        accepted[principal] = [keys.publicKey] + own.filter { $0 != keys.publicKey }
        var byKey: [Data: String] = [:]
        for (name, list) in accepted {
            for key in list {
                guard let raw = CurveKey.decode(key) else { throw Invalid("a public key of \(name) is not a Z85 CURVE key") }
                if let other = byKey[raw], other != name { throw Invalid("\(name) and \(other) share one public key") }
                byKey[raw] = name
            }
        }
        self.acceptedKeys = accepted
        self.publicKeys = accepted.compactMapValues(\.first)
        self.principalsByKey = byKey
    }

    /// The principal owning a client's 32-byte public key, or nil when it is not trusted.
    public func principal(ofKey key: Data) -> String? { principalsByKey[key] }

    /// The public key (Z85) of `principal`, or nil when none is configured.
    public func publicKey(of principal: String) -> String? { publicKeys[principal] }

    /// Loads `principal`'s secret key from `secretKeyFile` and every `*.pub` of
    /// `publicKeysDirectory` (the file name without `.pub` names the principal).
    public static func load(principal: String, publicKeysDirectory: String, secretKeyFile: String) throws -> BusSecurity {
        let secret: String
        do {
            secret = try KeyFile.read(secretKeyFile)
        } catch {
            throw Invalid("cannot read the bus secret key of \(principal) at \(secretKeyFile): \(error)")
        }
        let pair: CurveKeyPair
        do { pair = try CurveKeyPair(secretKey: secret) } catch { throw Invalid("\(secretKeyFile): \(error)") }
        var publics: [String: [String]] = [:]
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: publicKeysDirectory)
        } catch {
            throw Invalid("cannot list the bus public keys in \(publicKeysDirectory): \(error)")
        }
        for file in files where file.hasSuffix(".pub") {
            let name = String(file.dropLast(4))
            publics[name] = try KeyFile.readAll((publicKeysDirectory as NSString).appendingPathComponent(file))
        }
        if let listed = publics[principal], !listed.contains(pair.publicKey) {
            throw Invalid("\(secretKeyFile) does not match any key of \(principal).pub in \(publicKeysDirectory)")
        }
        return try BusSecurity(principal: principal, keys: pair, acceptedKeys: publics)
    }
}

/// The key directory layout `chronirctl keys generate` writes and the services read:
/// `public/<principal>.pub` (shareable) and `secret/<principal>.key` (mode 0600), each one Z85 line.
public enum KeyFile {
    /// The public key file of `principal` under `directory`.
    public static func publicPath(_ directory: String, _ principal: String) -> String {
        "\(directory)/public/\(principal).pub"
    }

    /// The secret key file of `principal` under `directory`.
    public static func secretPath(_ directory: String, _ principal: String) -> String {
        "\(directory)/secret/\(principal).key"
    }

    /// Creates a key pair for every principal that has none yet; returns those created.
    @discardableResult
    public static func generate(in directory: String, principals: [String]) throws -> [String] {
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(directory)/public", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(directory)/secret", withIntermediateDirectories: true,
                               attributes: [.posixPermissions: 0o700])
        var created: [String] = []
        for principal in principals where !fm.fileExists(atPath: secretPath(directory, principal)) {
            let pair = try CurveKeyPair.generate()
            let secret = secretPath(directory, principal)
            guard fm.createFile(atPath: secret, contents: Data("\(pair.secretKey)\n".utf8),
                                attributes: [.posixPermissions: 0o600]) else {
                throw BusSecurity.Invalid("cannot write \(secret)")
            }
            try Data("\(pair.publicKey)\n".utf8).write(to: URL(fileURLWithPath: publicPath(directory, principal)))
            created.append(principal)
        }
        return created
    }

    /// Starts rotating `principal`'s key pair: writes a new secret key and lists the new public
    /// key first in its public key file, the keys listed before after it (still accepted until
    /// ``finishRotation(in:principal:)``). Returns the new public key.
    @discardableResult
    public static func rotate(in directory: String, principal: String) throws -> String {
        let publicFile = publicPath(directory, principal), secretFile = secretPath(directory, principal)
        let listed = try readAll(publicFile)
        let pair = try CurveKeyPair.generate()
        // The public key first: a reload in between still finds the secret key listed.
        try ([pair.publicKey] + listed).map { "\($0)\n" }.joined().write(toFile: publicFile, atomically: true, encoding: .utf8)
        // Rewritten in place, not replaced: compose mounts a secret file by itself, and a
        // container keeps seeing the old file when the host's is replaced by a rename.
        guard let handle = FileHandle(forWritingAtPath: secretFile) else { throw BusSecurity.Invalid("cannot write \(secretFile)") }
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("\(pair.secretKey)\n".utf8))
        return pair.publicKey
    }

    /// Ends a rotation: `principal`'s public key file keeps only its current (first) key.
    /// Returns the keys removed.
    @discardableResult
    public static func finishRotation(in directory: String, principal: String) throws -> [String] {
        let publicFile = publicPath(directory, principal)
        let listed = try readAll(publicFile)
        try "\(listed[0])\n".write(toFile: publicFile, atomically: true, encoding: .utf8)
        return Array(listed.dropFirst())
    }

    /// The key in a key file: its first line that is not empty or a `#` comment.
    static func read(_ path: String) throws -> String {
        guard let first = try readAll(path).first else { throw BusSecurity.Invalid("\(path) holds no key") }
        return first
    }

    /// Every key of a key file, in order: each line that is not empty or a `#` comment. A public
    /// key file lists the principal's current key first, then keys still accepted during a
    /// rotation.
    static func readAll(_ path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let keys = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        guard !keys.isEmpty else { throw BusSecurity.Invalid("\(path) holds no key") }
        return keys
    }
}
