/// An engine's own error, which knows how to say itself to a user (SQLite's codes, PostgreSQL's
/// SQLSTATEs): the engine conforms its error type, and every command's message follows.
public protocol StoreFailure: Error {
    /// What went wrong and what to do, in words.
    var userMessage: String { get }
    /// Whether the failure is a full disk (a caller that has its own sentence about what was stored says only that).
    var isDiskFull: Bool { get }
}

/// The text a user sees for an error: what went wrong and what to do. An engine's codes are
/// turned into words (`StoreFailure`); wxdb's errors already describe themselves.
public func userMessage(for error: Error) -> String {
    switch error {
    case let error as StoreFailure:
        return error.userMessage
    case let error as CustomStringConvertible:
        return error.description
    default:
        return "\(error)"
    }
}

/// True when `error` is the engine reporting a full disk.
public func isDiskFull(_ error: Error) -> Bool {
    (error as? StoreFailure)?.isDiskFull == true
}
