import WxSQLite
import WxStore

extension SQLiteError: StoreFailure {
    /// SQLite's codes in words: what went wrong and what to do.
    public var userMessage: String {
        if isBusy {
            return "the database is busy (another wxdb is writing) and did not free up in time; try again in a minute"
        }
        if isReadOnly {
            return "the database is read-only (\(message)); check the file's permissions or the file system"
        }
        if isDiskFull {
            return "the disk is full; nothing was stored from this command. Free some space and run it again"
        }
        return "\(summary). Run 'wxdb doctor' to check the database"
    }
}
