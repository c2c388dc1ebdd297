import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a whole input file by reading until its end, so pipes and `/dev/stdin` work as well as
/// files; a failure says why (missing, a folder, no permission) instead of guessing.
func readInput(_ path: String, nothingDone: String = "") throws -> Data {
    let tail = nothingDone.isEmpty ? "" : ". " + nothingDone
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        let reason: String
        switch errno {
        case ENOENT, ENOTDIR: reason = "no such file"
        case EACCES, EPERM: reason = "no permission to read it"
        default: reason = String(cString: strerror(errno))
        }
        throw CLIError("cannot read \(path): \(reason)\(tail)")
    }
    defer { close(fd) }
    var info = stat()
    if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
        throw CLIError("cannot read \(path): it is a folder; name a file\(tail)")
    }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = read(fd, &buffer, buffer.count)
        if count == 0 { break }
        if count < 0 {
            if errno == EINTR { continue }
            throw CLIError("cannot read \(path): \(String(cString: strerror(errno)))\(tail)")
        }
        data.append(contentsOf: buffer[0..<count])
    }
    return data
}
