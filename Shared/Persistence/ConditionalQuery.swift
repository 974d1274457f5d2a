import PostgresNIO

/// A statement whose `WHERE` grows by the conditions that apply, each with its own bound
/// values: the one way optional filters are written (a list with optional filters adds a
/// condition only when the filter is set, so the planner sees just the predicates in use).
///
/// ```swift
/// var q = ConditionalQuery("SELECT … FROM completions WHERE alarm_id = {}", alarmId)
/// if let status { try q.and("status = {}", status) }
/// try q.append("ORDER BY completed_at DESC LIMIT {}", limit)
/// let rows = try await database.query(q.query)
/// ```
/// `{}` in a fragment stands for the next value, bound as a parameter (`$n`), never spliced
/// into the text.
public struct ConditionalQuery: Sendable {
    private var sql: String
    private var binds = PostgresBindings()

    /// Starts with `head` (usually ending in a first condition), its `{}` bound to `values`.
    public init(_ head: String, _ values: any PostgresEncodable & Sendable...) throws {
        sql = ""
        try add(head, values)
    }

    /// Appends ` AND <condition>`.
    public mutating func and(_ condition: String, _ values: any PostgresEncodable & Sendable...) throws {
        sql += " AND "
        try add(condition, values)
    }

    /// Appends ` <fragment>` (ordering, limits).
    public mutating func append(_ fragment: String, _ values: any PostgresEncodable & Sendable...) throws {
        sql += " "
        try add(fragment, values)
    }

    /// The statement with its bindings.
    public var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }

    private mutating func add(_ fragment: String, _ values: [any PostgresEncodable & Sendable]) throws {
        var rest = Substring(fragment)
        var next = values.makeIterator()
        while let range = rest.range(of: "{}") {
            guard let value = next.next() else { throw ConditionalQueryError("more {} than values in \(fragment)") }
            sql += rest[..<range.lowerBound]
            try bind(value)
            sql += "$\(binds.count)"
            rest = rest[range.upperBound...]
        }
        guard next.next() == nil else { throw ConditionalQueryError("more values than {} in \(fragment)") }
        sql += rest
    }

    private mutating func bind<T: PostgresEncodable & Sendable>(_ value: T) throws {
        try binds.append(value)
    }
}

/// A fragment of a ``ConditionalQuery`` whose placeholders and values do not match.
public struct ConditionalQueryError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
