import WxSQLite

/// The text a user sees for an error: what went wrong and what to do. SQLite's own codes are
/// turned into words; wxdb's errors already describe themselves.
public func userMessage(for error: Error) -> String {
    switch error {
    case let error as SQLiteError:
        if error.isBusy {
            return "the database is busy (another wxdb is writing) and did not free up in time; try again in a minute"
        }
        if error.isReadOnly {
            return "the database is read-only (\(error.message)); check the file's permissions or the file system"
        }
        if error.isDiskFull {
            return "the disk is full; nothing was stored from this command. Free some space and run it again"
        }
        return "\(error.summary). Run 'wxdb doctor' to check the database"
    case let error as CustomStringConvertible:
        return error.description
    default:
        return "\(error)"
    }
}

/// True when `error` is SQLite reporting a full disk (a caller that has its own sentence about what
/// was stored says only that).
public func isDiskFull(_ error: Error) -> Bool {
    (error as? SQLiteError)?.isDiskFull == true
}
