// Many rows in one statement: `INSERT … VALUES (…), (…) ON CONFLICT …` or `… IN (VALUES …)`, with
// every value a parameter ($1, $2, …; nothing spliced into the SQL). A store's sums groups and an
// observation batch went row by row, one round trip each: most of a PostgreSQL store's time.
import WxPostgres

/// Rows collected for one multi-row statement, sent `rowsPerStatement` at a time.
struct MultiRowStatement {
    let prefix: String
    let suffix: String
    let width: Int
    let rowsPerStatement: Int
    let casts: [String]
    /// Parameters every statement starts with ($1 … before the rows' own).
    let leading: [PostgresValue]
    private var arguments: [PostgresValue] = []
    private(set) var rows = 0
    /// The statements sent so far (for the tests that count round trips).
    private(set) var sent = 0

    /// `prefix` ends where the first row's "(" goes; `casts` (one per column, or none) follow each
    /// placeholder, for VALUES whose types the server cannot take from an INSERT's columns.
    init(
        _ prefix: String, width: Int, suffix: String = "", rowsPerStatement: Int = 1000, casts: [String] = [],
        leading: [PostgresValue] = []
    ) {
        precondition(
            width > 0 && leading.count + width * rowsPerStatement <= 65535,
            "a statement takes at most 65,535 parameters")
        precondition(casts.isEmpty || casts.count == width)
        self.prefix = prefix
        self.suffix = suffix
        self.width = width
        self.rowsPerStatement = rowsPerStatement
        self.casts = casts
        self.leading = leading
        arguments = leading
    }

    var isEmpty: Bool { rows == 0 }

    /// Adds a row of `width` values; sends the statement when it is full.
    mutating func append(_ row: [PostgresValue], _ db: PostgresConnection) throws {
        precondition(row.count == width, "a row of a multi-row statement has one value per column")
        arguments += row
        rows += 1
        if rows == rowsPerStatement { try flush(db) }
    }

    /// Sends the rows collected so far, if any.
    mutating func flush(_ db: PostgresConnection) throws {
        guard rows > 0 else { return }
        try db.run(
            Self.sql(prefix: prefix, suffix: suffix, width: width, rows: rows, casts: casts, first: leading.count + 1),
            arguments)
        arguments.removeAll(keepingCapacity: true)
        arguments += leading
        rows = 0
        sent += 1
    }

    /// The statement's text for `rows` rows: placeholders only, the first row's first `$first`.
    static func sql(prefix: String, suffix: String, width: Int, rows: Int, casts: [String], first: Int = 1) -> String {
        var text = prefix
        text.reserveCapacity(prefix.count + suffix.count + rows * width * 8)
        var number = first - 1
        for row in 0..<rows {
            text += row == 0 ? "(" : ", ("
            for column in 0..<width {
                number += 1
                if column > 0 { text += ", " }
                text += "$" + String(number)
                if !casts.isEmpty { text += casts[column] }
            }
            text += ")"
        }
        return text + suffix
    }
}
