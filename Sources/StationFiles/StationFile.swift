import FoundationEssentials
import WxCore
import WxSQLite
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `body` on a station's database opened strictly read-only (`mode=ro`, never created, journal
/// untouched) inside one read transaction, released on return. SQLite's errors become messages
/// naming the file: damage found halfway through the read is the station file's, not wxdb's.
///
/// The file is someone else's and may be hostile: only a regular file is opened (a fifo would block
/// forever), its schema is not trusted (no functions with side effects in its views), and the
/// work of the whole read is capped by the file's size, so a view over an endless recursive query
/// ends with a message instead of never.
func readStationFile<T>(_ path: String, kind: String, _ body: (Database) throws -> T) throws -> T {
    var info = stat()
    if stat(path, &info) == 0 {
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR:
            throw StationFileError(
                "\(path) is a folder, not a \(kind); nothing was stored. Pass the database file inside it")
        default:
            throw StationFileError(
                "\(path) is not a regular file (a fifo, device or socket), so it cannot be read as a \(kind); nothing was stored. Pass the database file itself"
            )
        }
    }
    // What the file can really hold: the database and its WAL.
    var wal = stat()
    let bytes = Int64(info.st_size) + (stat(path + "-wal", &wal) == 0 ? Int64(wal.st_size) : 0)
    do {
        let db = try Database(path: path, options: .foreignReadOnly)
        try db.execute("PRAGMA trusted_schema = OFF")
        db.limitWork(steps: workLimit(bytes: bytes), valueBytes: 16 << 20)
        do {
            return try db.transaction(.deferred) { try body(db) }
        } catch let error as SQLiteError where db.workLimitReached || error.isInterrupted {
            throw StationFileError(
                "reading \(path) took more work than a \(kind) of its size can need (over \(workLimit(bytes: bytes)) steps for \(bytes) bytes), so it holds something that is not a station's records, such as a view over an endless query; nothing was stored"
            )
        }
    } catch let error as SQLiteError {
        if error.isNotADatabase {
            throw StationFileError(
                "\(path) is not a SQLite database, or it is damaged, so it cannot be read as a \(kind); nothing was stored. Check the path"
            )
        }
        if error.isBusy {
            throw StationFileError(
                "\(path) stayed locked by another program; nothing was stored. Try again in a minute")
        }
        if error.isReadOnly {
            let journal = path + "-journal"
            if FileManager.default.fileExists(atPath: journal) {
                throw StationFileError(
                    "\(path) has a hot journal beside it (\(journal)): a program stopped in the middle of writing it, and SQLite must roll that back before the file can be read, which would mean writing to it; wxdb never writes a station's files. Let the station's own program open it once, or copy both files elsewhere and import the copy. Nothing was stored"
                )
            }
            throw StationFileError(
                "\(path) cannot be read without writing to it (\(error.message)): its -wal or -shm needs recovery, which only the station's own program may do. Let it open the file once, or copy the files elsewhere and import the copy. Nothing was stored"
            )
        }
        throw StationFileError(
            "cannot read \(path) (\(error.message)); check the path and that it is readable. Nothing was stored")
    }
}

/// The virtual-machine steps a read of a station file of `bytes` may take: far more than any
/// query of wxdb's needs per byte of records (a few dozen per row), far less than forever.
func workLimit(bytes: Int64) -> Int64 {
    let (scaled, overflow) = max(bytes, 0).multipliedReportingOverflow(by: 2000)
    return overflow ? Int64.max / 2 : min(scaled, Int64.max / 4) + 50_000_000
}

/// The column names of `table`, lowercased; empty when there is no such table.
func columnNames(_ db: Database, table: String) throws -> Set<String> {
    Set(try db.rows("SELECT lower(name) FROM pragma_table_info(?)", [.text(table)]) { $0.string(0) })
}
