import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command's output goes: stdout, or a file the command replaces only when it completes.
///
/// Every command that writes a file the user named goes through this one type, because the file
/// sits in a folder other local users may write to: the temporary copy is created exclusively
/// (`O_EXCL|O_NOFOLLOW`) under an unpredictable name, so a planted symlink or file is never
/// followed or reused; the finished copy takes the old output's permissions only when this user
/// owns it (never its setuid/setgid/sticky bits) and is renamed over the name (a rename replaces a
/// symlink, never its target); the database's own files are refused; SIGINT/SIGTERM/SIGHUP/SIGUSR1
/// remove the temporary copy. What is not a regular file (a terminal, `/dev/null`, a fifo,
/// `/dev/stdout`) is written in place, never renamed over; block devices and sockets are refused.
final class OutputFile {
    let fd: Int32
    let path: String?
    private let temporary: String?
    private var slot: Int?
    /// Written in place (a device, a fifo, stdout under another name): nothing to rename or undo.
    private let inPlace: Bool
    /// The descriptor is the process's stdout, which the output must not close.
    private let borrowed: Bool

    /// stdout when `path` is nil, else a temporary file beside `path`. `protected` are files the
    /// output must never be (the database and its -wal/-shm/lock files), compared by device and
    /// inode and by resolved name.
    init(path: String?, stdout: Int32, protected: [String] = []) throws {
        self.path = path
        guard let path else {
            fd = stdout
            temporary = nil
            inPlace = true
            borrowed = true
            return
        }
        guard !path.isEmpty else { throw CLIError("--output needs a file name") }
        try Self.refuseProtected(path, protected)
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        var old = stat()
        let exists = lstat(path, &old) == 0
        if exists, let special = try Self.openInPlace(path, old, stdout: stdout) {
            fd = special.fd
            borrowed = special.borrowed
            temporary = nil
            inPlace = true
            return
        }
        inPlace = false
        borrowed = false
        if name.utf8.count > 255 {
            throw CLIError(
                "cannot write \(path): its file name is \(name.utf8.count) bytes long, and file names can be at most 255; choose a shorter name"
            )
        }
        // The old output's permissions carry over (a 0600 file stays 0600) when it is this user's
        // own: a file another user planted in a shared folder must not hand its mode (0666, setuid)
        // to ours. A new file gets the usual 0666 less the umask.
        var mode = Self.defaultMode()
        if exists && (old.st_mode & S_IFMT) == S_IFREG && old.st_uid == geteuid() {
            mode = old.st_mode & 0o777
        }
        PartialFiles.removeStale(in: folder)
        // Short and unpredictable: a long output name must not make the temporary name too long.
        let stem = String(decoding: name.utf8.prefix(64), as: UTF8.self).replacing("\u{FFFD}", with: "")
        var fd: Int32 = -1
        var temporary = ""
        var slot: Int?
        for _ in 0..<32 {
            let token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            temporary = PathText.join(folder, ".\(stem)\(PartialFiles.marker)\(getpid())-\(token)")
            // Known to the signal handler before it exists, so no moment leaves it behind.
            slot = PartialFiles.register(temporary)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            let code = errno
            if fd >= 0 { break }
            PartialFiles.unregister(slot)
            slot = nil
            if code != EEXIST {
                throw CLIError("cannot write \(path): \(Self.reason(code, folder: folder))")
            }
        }
        guard fd >= 0 else { throw CLIError("cannot write \(path): no unused temporary name beside it") }
        // 0600 until written, then the mode it will keep (fchmod on our own descriptor, no path).
        if mode != 0o600 { fchmod(fd, mode) }
        self.fd = fd
        self.temporary = temporary
        self.slot = slot
    }

    /// For an existing `path` that is not a regular file (lstat `old`): the descriptor to write
    /// in place, nil when the usual temporary-and-rename applies, or an error when it must not be
    /// written at all.
    static func openInPlace(_ path: String, _ old: stat, stdout: Int32) throws -> (fd: Int32, borrowed: Bool)? {
        let kind = old.st_mode & S_IFMT
        if kind == S_IFREG { return nil }
        if kind == S_IFDIR { throw CLIError("cannot write \(path): it is a folder; name a file") }
        var target = stat()
        let resolves = stat(path, &target) == 0
        let targetKind = target.st_mode & S_IFMT
        // `/dev/stdout`, `/proc/self/fd/1` and the like: the stdout the shell gave us.
        var out = stat()
        if resolves && fstat(stdout, &out) == 0 && out.st_dev == target.st_dev && out.st_ino == target.st_ino {
            return (stdout, true)
        }
        if kind == S_IFLNK {
            let system = ["/dev/", "/proc/"].contains { resolvedPath(path).hasPrefix($0) }
            // A link to nothing or to a regular file is replaced, never followed (as a planted link
            // must be), unless it is one of the system's own names for an open file.
            if !resolves || (targetKind == S_IFREG && !system) { return nil }
            if targetKind == S_IFDIR { throw CLIError("cannot write \(path): it is a folder; name a file") }
            guard old.st_uid == 0 || old.st_uid == geteuid() else {
                throw CLIError(
                    "cannot write \(path): it is a link another user made to \(describe(targetKind)); wxdb does not follow it. Choose another --output"
                )
            }
        }
        let final = kind == S_IFLNK ? targetKind : kind
        guard final == S_IFCHR || final == S_IFIFO || final == S_IFREG else {
            throw CLIError(
                "cannot write \(path): it is \(describe(final)), not a file; wxdb writes files, terminals and pipes only. Choose another --output"
            )
        }
        // In place: no O_CREAT (the node exists), O_NOCTTY (a terminal must not become ours).
        let flags =
            O_WRONLY | O_NOCTTY | O_CLOEXEC | (kind == S_IFLNK ? 0 : O_NOFOLLOW) | (final == S_IFREG ? O_TRUNC : 0)
        let fd = open(path, flags)
        guard fd >= 0 else {
            throw CLIError(
                "cannot write \(path): \(reason(errno, folder: PathText.folder(of: path)))")
        }
        // Still what was checked (not swapped for a block device in between).
        var opened = stat()
        if fstat(fd, &opened) != 0 || (opened.st_mode & S_IFMT) != final {
            close(fd)
            throw CLIError("cannot write \(path): it changed while wxdb opened it; try again")
        }
        return (fd, false)
    }

    static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFBLK: return "a block device (a disk)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a device"
        case S_IFIFO: return "a fifo"
        case S_IFDIR: return "a folder"
        default: return "a special file"
        }
    }

    /// Writes every byte to the output; a failed write (a full disk, a closed pipe) throws.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        let code = writeAll(fd, bytes)
        if code != 0 { throw OutputWriteError(code: code, path: path) }
    }

    /// Makes the output final: flushed to disk and renamed over `path` (in place: closed, its
    /// close checked, since a device or a network file may report a lost write only then).
    func commit() throws {
        guard let path, !closed else { return }
        closed = true
        if inPlace {
            if !borrowed && close(fd) != 0 { throw OutputWriteError(code: errno, path: path) }
            return
        }
        guard let temporary else { return }
        defer { PartialFiles.unregister(slot) }
        if fsync(fd) != 0 || close(fd) != 0 {
            let code = errno
            unlink(temporary)
            throw CLIError(
                "cannot write \(path): \(Self.reason(code, folder: PathText.folder(of: path))); nothing was written there"
            )
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw CLIError(
                "cannot write \(path); nothing was written there: \(Self.reason(code, folder: PathText.folder(of: path)))"
            )
        }
    }

    private var closed = false

    /// Removes the temporary file; the old output, if any, stays as it was.
    func abandon() {
        guard path != nil, !closed else { return }
        closed = true
        if !borrowed { close(fd) }
        guard let temporary else { return }
        unlink(temporary)
        PartialFiles.unregister(slot)
    }

    static func defaultMode() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return 0o666 & ~mask
    }

    static func reason(_ code: Int32, folder: String) -> String {
        let shown = folder.isEmpty ? "the current folder" : folder
        switch code {
        case ENOENT, ENOTDIR: return "the folder \(shown) does not exist; create it or choose another path"
        case EACCES, EPERM: return "no permission to create files in \(shown); choose another folder"
        case EROFS: return "\(shown) is on a read-only file system; choose another folder"
        case ENOSPC, EDQUOT: return "the disk is full; free some space or choose another folder"
        case ENAMETOOLONG: return "the path is too long; choose a shorter name"
        default: return String(cString: strerror(code))
        }
    }

    /// Refuses an output that is (or would replace) one of `protected`: the same device and inode,
    /// or the same resolved name (a -wal file that does not exist yet has no inode to compare).
    static func refuseProtected(_ path: String, _ protected: [String]) throws {
        var target = stat()
        let exists = stat(path, &target) == 0
        var link = stat()
        let linkExists = lstat(path, &link) == 0
        let resolvedName = resolvedPath(path)
        for file in protected {
            var other = stat()
            let same =
                stat(file, &other) == 0
                && ((exists && other.st_dev == target.st_dev && other.st_ino == target.st_ino)
                    || (linkExists && other.st_dev == link.st_dev && other.st_ino == link.st_ino))
            if same || resolvedName == resolvedPath(file) {
                throw CLIError(
                    "cannot write \(path): it is the database's own file \(file); writing there would destroy the database. Choose another --output"
                )
            }
        }
    }

    /// `path` with its folder resolved (symlinks, `..`), the name kept: what a rename would replace.
    static func resolvedPath(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        guard let real = realpath(folder, nil) else { return url.standardizedFileURL.path }
        defer { free(real) }
        return PathText.join(String(cString: real), url.lastPathComponent)
    }
}

/// The temporary output files of this process, for the signal handler: plain C strings in fixed
/// slots, because a signal handler may only call async-signal-safe functions (`unlink`).
enum PartialFiles {
    static let capacity = 8
    /// In every temporary name, followed by the writer's pid and a random token.
    static let marker = ".wxdb-partial-"
    /// The signals that end wxdb by default and can be caught: each removes the partial files.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2]
    nonisolated(unsafe) static let slots: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let slots = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
        return slots
    }()
    nonisolated(unsafe) static var installed = false
    static let lock = PlainLock()

    static func register(_ path: String) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        installHandlers()
        for index in 0..<capacity where slots[index] == nil {
            slots[index] = strdup(path)
            return index
        }
        return nil
    }

    static func unregister(_ slot: Int?) {
        guard let slot else { return }
        lock.lock()
        defer { lock.unlock() }
        let pointer = slots[slot]
        slots[slot] = nil
        free(pointer)
    }

    /// Once per process: on a terminating signal remove every partial file, then die of the signal
    /// as before (the default action), so the exit status still says what happened.
    static func installHandlers() {
        guard !installed else { return }
        installed = true
        for signalNumber in signals {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = { signalNumber in
                    PartialFiles.removeAll()
                    signal(signalNumber, SIG_DFL)
                    raise(signalNumber)
                }
            #else
                action.__sigaction_u.__sa_handler = { signalNumber in
                    PartialFiles.removeAll()
                    signal(signalNumber, SIG_DFL)
                    raise(signalNumber)
                }
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signalNumber, &action, nil)
        }
    }

    static func removeAll() {
        for index in 0..<capacity {
            if let path = slots[index] { unlink(path) }
        }
    }

    /// Removes the partial files in `folder` that this user's wxdb left when it was killed
    /// (SIGKILL, a crash, a power cut): named by our pattern, regular files of ours, whose writer
    /// is gone (no such process, or the process with that pid started after the file was last
    /// written). Returns the names removed. A file of a live writer is never touched.
    @discardableResult
    static func removeStale(in folder: String) -> [String] {
        let shown = folder.isEmpty ? "." : folder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: shown) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(".") {
            guard let range = name.firstRange(of: marker) else { continue }
            let rest = name[range.upperBound...].split(separator: "-", maxSplits: 1)
            guard rest.count == 2, let pid = Int32(rest[0]), pid > 0, pid != getpid(),
                !rest[1].isEmpty, rest[1].allSatisfy({ $0.isLetter || $0.isNumber })
            else { continue }
            let path = PathText.join(shown, name)
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
                continue
            }
            if isWriterAlive(pid, lastWritten: Int64(info.st_mtim.tv_sec)) { continue }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed
    }

    /// Whether process `pid` may still be writing a file last written at `lastWritten`: it exists
    /// and started before then (a process that started later merely reuses the pid).
    static func isWriterAlive(_ pid: Int32, lastWritten: Int64) -> Bool {
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        guard let started = processStart(pid) else { return true }
        // Start times are known to the clock tick, boot time to the second: a margin either way.
        return started <= lastWritten + 2
    }

    /// When process `pid` started (Unix seconds), from /proc; nil when unknown.
    static func processStart(_ pid: Int32) -> Int64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let boot = Int64(line.dropFirst(6).trimmed(.whitespaces))
        else { return nil }
        // Fields after the command name; starttime is field 22 of the whole line, the 20th here.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Int64(fields[19]) else { return nil }
        let perSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        return boot + ticks / max(perSecond, 1)
    }
}

/// A failed write to an output (a full disk, a closed pipe); `path` nil for stdout.
struct OutputWriteError: Error, CustomStringConvertible {
    let code: Int32
    let path: String?

    var description: String {
        let reason =
            code == ENOSPC || code == EDQUOT
            ? "the disk is full" : String(cString: strerror(code)).lowercased()
        guard let path else {
            return "cannot write to stdout: \(reason); the output is incomplete. Free some space or send it elsewhere"
        }
        return "cannot write \(path): \(reason); nothing was written there. Free some space or choose another --output"
    }
}
