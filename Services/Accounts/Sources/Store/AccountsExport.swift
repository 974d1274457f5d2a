import PostgresNIO
import ServiceKit

/// The accounts service's part of a data export: the profile with its settings (no password
/// hash), devices, sessions, and groups with the user's role.
enum AccountsExport {
    static let sections: [ExportSection] = [
        ExportSection("profile") { uid, after, limit in
            """
            SELECT id, jsonb_build_object('uid', id, 'email', email, 'displayName', display_name, 'photoURL', photo_url, 'tier', tier,
                'settings', settings, 'platform', platform, 'appVersion', app_version, 'migratedAt', migrated_at,
                'createdAt', created_at, 'updatedAt', updated_at)::text
            FROM users WHERE id = \(uid) AND id > \(after) ORDER BY id LIMIT \(limit)
            """
        },
        ExportSection("devices") { uid, after, limit in
            """
            SELECT device_id, (to_jsonb(d) - 'user_id')::text FROM devices d
            WHERE user_id = \(uid) AND device_id > \(after) ORDER BY device_id LIMIT \(limit)
            """
        },
        ExportSection("identities") { uid, after, limit in
            """
            SELECT issuer || ' ' || subject, jsonb_build_object('issuer', issuer, 'subject', subject, 'email', email, 'linkedAt', created_at)::text
            FROM identities WHERE user_id = \(uid) AND issuer || ' ' || subject > \(after) ORDER BY 1 LIMIT \(limit)
            """
        },
        ExportSection("sessions") { uid, after, limit in
            """
            SELECT id, jsonb_build_object('id', id, 'createdAt', created_at, 'revokedAt', revoked_at, 'revokeReason', revoke_reason)::text
            FROM sessions WHERE user_id = \(uid) AND id > \(after) ORDER BY id LIMIT \(limit)
            """
        },
        ExportSection("groups") { uid, after, limit in
            """
            SELECT g.id, jsonb_build_object('id', g.id, 'name', g.name, 'description', g.description, 'iconName', g.icon_name,
                'ownerId', g.owner_id, 'role', m.role, 'joinedAt', m.joined_at, 'createdAt', g.created_at)::text
            FROM group_members m JOIN groups g ON g.id = m.group_id
            WHERE m.user_id = \(uid) AND g.id > \(after) ORDER BY g.id LIMIT \(limit)
            """
        },
    ]
}
