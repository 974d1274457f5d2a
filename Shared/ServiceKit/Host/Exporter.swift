import Contracts
import Foundation
import Messaging
import Persistence
import PostgresNIO

/// One section of a service's part of a user's data export: the user's rows, each as JSON
/// with a text key to page by.
public struct ExportSection: Sendable {
    /// The section's name in the export document.
    public let name: String
    /// `SELECT key::text, json::text … WHERE <the user's> AND key > after ORDER BY key LIMIT limit`.
    public let query: @Sendable (_ uid: String, _ after: String, _ limit: Int) -> PostgresQuery

    public init(_ name: String, query: @escaping @Sendable (_ uid: String, _ after: String, _ limit: Int) -> PostgresQuery) {
        self.name = name
        self.query = query
    }
}

/// Answers a service's export request page by page: each page is one section's next rows (at
/// most `pageSize`, under the message size limit), every section in turn, empty ones included,
/// so the gateway can stream the document without holding it.
public struct Exporter: Sendable {
    let database: Database
    let sections: [ExportSection]
    let pageSize: Int

    public init(database: Database, sections: [ExportSection], pageSize: Int = 200) {
        self.database = database
        self.sections = sections
        self.pageSize = pageSize
    }

    /// Registers `M` (an export method of this service) in `router`; the actor is the user.
    public func register<M: RPCMethod>(_ method: M.Type, in router: inout RPCRouter)
        where M.Request == ExportRequest, M.Response == ExportPage {
        router.on(M.self) { request, context in try await page(uid: try context.requireActor(), after: request.after) }
    }

    /// The page after `cursor` (`<section index>:<last key>`).
    public func page(uid: String, after cursor: String?) async throws -> ExportPage {
        var index = 0
        var key = ""
        if let cursor {
            guard let colon = cursor.firstIndex(of: ":"), let i = Int(cursor[..<colon]), sections.indices.contains(i) else {
                throw ServiceError(.validationFailed, "after must be a cursor from a previous export page")
            }
            index = i
            key = String(cursor[cursor.index(after: colon)...])
        }
        let section = sections[index]
        let rows = try await database.query(section.query(uid, key, pageSize + 1)).decode((String, String).self)
        var items: [JSONValue] = []
        var last = key
        var more = false
        for try await (k, json) in rows {
            if items.count == pageSize {
                more = true
                break
            }
            items.append(try JSONCoding.decode(JSONValue.self, from: Data(json.utf8)))
            last = k
        }
        let next = more ? "\(index):\(last)" : (index + 1 < sections.count ? "\(index + 1):" : nil)
        return ExportPage(section: section.name, items: items, next: next)
    }
}

extension ServiceRuntime {
    /// An exporter of `sections` with the page size of `CHRONIR_EXPORT_PAGE_SIZE` (200 rows).
    public func exporter(database: Database, sections: [ExportSection]) -> Exporter {
        Exporter(database: database, sections: sections, pageSize: config.exportPageSize)
    }
}
