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
/// followed or reused; the finished copy takes the old output's permissions and is renamed over
/// the name (a rename replaces a symlink, never its target); the database's own files are refused;
/// and SIGINT/SIGTERM remove the temporary copy.
final class OutputFile {
    let fd: Int32
    let path: String?
    private let temporary: String?
    private var slot: Int?

    /// stdout when `path` is nil, else a temporary file beside `path`. `protected` are files the
    /// output must never be (the database and its -wal/-shm/lock files), compared by device and
    /// inode and by resolved name.
    init(path: String?, stdout: Int32, protected: [String] = []) throws {
        self.path = path
        guard let path else {
            fd = stdout
            temporary = nil
            return
        }
        guard !path.isEmpty else { throw CLIError("--output needs a file name") }
        try Self.refuseProtected(path, protected)
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        if name.utf8.count > 255 {
            throw CLIError(
                "cannot write \(path): its file name is \(name.utf8.count) bytes long, and file names can be at most 255; choose a shorter name"
            )
        }
        // The old output's permissions carry over (a 0600 file stays 0600); a new file gets the
        // usual 0666 less the umask.
        var old = stat()
        var mode: mode_t
        if lstat(path, &old) == 0 {
            if (old.st_mode & S_IFMT) == S_IFDIR {
                throw CLIError("cannot write \(path): it is a folder; name a file")
            }
            mode = (old.st_mode & S_IFMT) == S_IFREG ? old.st_mode & 0o7777 : Self.defaultMode()
        } else {
            mode = Self.defaultMode()
        }
        // Short and unpredictable: a long output name must not make the temporary name too long.
        let stem = String(decoding: name.utf8.prefix(64), as: UTF8.self).replacing("\u{FFFD}", with: "")
        var fd: Int32 = -1
        var temporary = ""
        var slot: Int?
        for _ in 0..<32 {
            let token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            temporary = PathText.join(folder, ".\(stem).wxdb-partial-\(token)")
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

    /// Makes the output final: flushed to disk and renamed over `path`.
    func commit() throws {
        guard let path, let temporary else { return }
        defer { PartialFiles.unregister(slot) }
        if fsync(fd) != 0 || close(fd) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CLIError("cannot write \(path): \(reason); nothing was written there. Check the disk and try again")
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw CLIError(
                "cannot write \(path); nothing was written there: \(Self.reason(code, folder: PathText.folder(of: path)))"
            )
        }
    }

    /// Removes the temporary file; the old output, if any, stays as it was.
    func abandon() {
        guard let temporary else { return }
        close(fd)
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

/// The temporary output files of this process, for the SIGINT/SIGTERM handler: plain C strings in
/// fixed slots, because a signal handler may only call async-signal-safe functions (`unlink`).
enum PartialFiles {
    static let capacity = 8
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

    /// Once per process: on SIGINT or SIGTERM remove every partial file, then die of the signal as
    /// before (the default action), so the exit status still says what happened.
    static func installHandlers() {
        guard !installed else { return }
        installed = true
        for signalNumber in [SIGINT, SIGTERM] {
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
}
