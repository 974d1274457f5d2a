import Contracts
import Foundation
import Persistence
import PostgresNIO

/// The embedded default: bytes in `alarms.photo_blobs`, in the service's own PostgreSQL.
struct DatabasePhotoStorage: PhotoStorage {
    let database: Database
    var name: String { "postgresql" }

    func put(key: String, data: Data, type: PhotoType) async throws {
        try await database.query("""
            INSERT INTO photo_blobs (object_key, bytes) VALUES (\(key), \(data))
            ON CONFLICT (object_key) DO UPDATE SET bytes = EXCLUDED.bytes
            """).drain()
    }

    func get(key: String) async throws -> Data? {
        for try await bytes in try await database.query("SELECT bytes FROM photo_blobs WHERE object_key = \(key)").decode(ByteBuffer.self) {
            return Data(buffer: bytes)
        }
        return nil
    }

    func delete(key: String) async throws {
        try await database.query("DELETE FROM photo_blobs WHERE object_key = \(key)").drain()
    }
}
