import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock beside the database (`<db>.ingest-lock`), so two ingests never fetch at once.
/// The kernel releases it when the process ends, however it ends, so a crash never leaves it stuck.
public final class ProcessLock {
    public let path: String
    private let fd: Int32

    public enum Failure: Error, CustomStringConvertible {
        case busy(path: String, holder: String?, waited: Double)
        case cannotOpen(path: String, reason: String)

        public var description: String {
            switch self {
            case .busy(let path, let holder, let waited):
                let who = holder.map { " (pid \($0))" } ?? ""
                return String(format: "another wxdb ingest%@ is still running on this database; gave up after waiting %.0f s. Nothing was fetched. If it is stuck, stop it; the lock (%@) frees itself when it exits", who, waited, path)
            case .cannotOpen(let path, let reason):
                return "cannot create the lock file \(path): \(reason). Check the database folder is writable"
            }
        }
    }

    /// Takes the lock, waiting up to `timeout` seconds for another holder to finish.
    public init(databasePath: String, timeout: Double) throws {
        // The same database reached by another spelling (relative, symlink) must find the same lock.
        let real = realpath(databasePath, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? databasePath
        path = real + ".ingest-lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        let start = Date()
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let waited = Date().timeIntervalSince(start)
            if waited >= timeout {
                let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                close(fd)
                throw Failure.busy(path: path, holder: holder?.isEmpty == false ? holder : nil, waited: waited)
            }
            usleep(100_000)
        }
        let pid = "\(getpid())\n"
        ftruncate(fd, 0)
        _ = pid.withCString { write(fd, $0, strlen($0)) }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
