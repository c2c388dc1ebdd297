import Foundation
import WxSQLite

/// What `Store.vacuum` did.
public struct VacuumResult: Sendable, Equatable {
    /// True when a reader's open snapshot kept the -wal file from being folded back and truncated.
    public var walKept: Bool
    /// The -wal file's size afterwards.
    public var walBytes: Int64
}

extension Store {
    /// Free bytes for an unprivileged writer in the database's folder, or nil when unknown.
    public func freeBytesBeside() -> Int64? {
        let folder = (path as NSString).deletingLastPathComponent
        var info = statvfs()
        guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Rewrites the file without its free pages (VACUUM), then folds the -wal back into it and
    /// truncates it. Needs about the database's size free beside it while it runs.
    public func vacuum(busyTimeoutMilliseconds: Int32) throws -> VacuumResult {
        try db.execute("VACUUM")
        // A truncating checkpoint waits for readers through the busy handler; a reader holding a
        // snapshot for long must not hold the command for the whole busy timeout.
        db.setBusyTimeout(milliseconds: 2000)
        defer { db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds) }
        // (busy, frames in the log, frames checkpointed): busy, or frames left over, means a reader
        // still needed the old pages.
        let row = try db.firstRow("PRAGMA wal_checkpoint(TRUNCATE)") { ($0.int64(0), $0.int64(1), $0.int64(2)) }
        let walBytes = fileSize(path + "-wal")
        let kept = (row.map { $0.0 != 0 || $0.1 != $0.2 } ?? false) || walBytes > 0
        return VacuumResult(walKept: kept, walBytes: walBytes)
    }
}
