/// One schema change of either engine: a name (its file name without `.sql`) and the SQL it runs.
/// SQLite's migrations (Migrations/*.sql) and PostgreSQL's (Migrations/postgresql/*.sql) are both
/// recorded with this checksum, so an edited migration is noticed the same way on each.
public struct SchemaMigration: Sendable, Equatable {
    public let name: String
    public let sql: String
    /// A checksum of the SQL text, recorded when the migration is applied, so an edited
    /// migration is noticed instead of silently diverging from databases already migrated.
    public let checksum: String

    public init(name: String, sql: String) {
        self.init(name: name, checksum: Self.checksum(of: sql), sql: sql)
    }

    /// A migration whose checksum was computed ahead (Scripts/embed-migrations writes them, so an open
    /// does not hash the whole schema's SQL again; a test checks each against ``checksum(of:)``).
    public init(name: String, checksum: String, sql: String) {
        self.name = name
        self.sql = sql
        self.checksum = checksum
    }

    /// FNV-1a (64 bits) of the SQL's UTF-8 bytes, as 16 lower-case hex digits.
    public static func checksum(of sql: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
