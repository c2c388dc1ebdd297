import FoundationEssentials
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An advisory lock beside the database (`<db>.ingest-lock`), so two ingests never fetch at once.
/// The kernel releases it when the process ends, however it ends, so a crash never leaves it stuck.
public final class ProcessLock {
    public let path: String
    private var fd: Int32 = -1

    public enum Failure: Error, CustomStringConvertible {
        case busy(path: String, holder: String?, waited: Double)
        case cannotOpen(path: String, reason: String)

        public var description: String {
            switch self {
            case .busy(let path, let holder, let waited):
                let who = holder.map { " (pid \($0))" } ?? ""
                return
                    "another wxdb ingest\(who) is still running on this database; gave up after waiting \(String(printf: "%.0f", waited)) s. Nothing was fetched. If it is stuck, stop it; the lock (\(path)) frees itself when it exits"
            case .cannotOpen(let path, let reason):
                return "cannot use the lock file \(path): \(reason)"
            }
        }
    }

    /// Takes the lock, waiting up to `timeout` seconds for another holder to finish.
    public init(databasePath: String, timeout: Double) throws {
        // The same database reached by another spelling (relative, symlink) must find the same lock.
        let real =
            realpath(databasePath, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? databasePath
        path = real + ".ingest-lock"
        // Never through a link, never a file with other names, never something longer than a pid:
        // a planted `db.sqlite.ingest-lock -> victim` must not make wxdb truncate the victim.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP {
                throw Failure.cannotOpen(
                    path: path,
                    reason: "it is a symbolic link, which wxdb does not follow; if you did not make it, remove it")
            }
            throw Failure.cannotOpen(
                path: path, reason: String(cString: strerror(code)) + ". Check the database folder is writable")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1, info.st_size <= 32 else {
            close(fd)
            throw Failure.cannotOpen(
                path: path,
                reason:
                    "it is not a wxdb lock file (not a plain file of its own holding a process id), so wxdb leaves it alone; if you did not make it, remove it"
            )
        }
        self.fd = fd
        let start = Date()
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let waited = Date().timeIntervalSince(start)
            if waited >= timeout {
                var buffer = [UInt8](repeating: 0, count: 32)
                let count = pread(fd, &buffer, 32, 0)
                let holder = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmed()
                close(fd)
                self.fd = -1
                throw Failure.busy(path: path, holder: holder.isEmpty ? nil : holder, waited: waited)
            }
            usleep(100_000)
        }
        let pid = "\(getpid())\n"
        ftruncate(fd, 0)
        _ = pid.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
    }
}
