import Foundation
import WxCore
import WxStore

/// Where a command writes, what environment it sees, and what time it is. Tests give their own.
public final class Context: @unchecked Sendable {
    public var environment: [String: String]
    public var stdoutIsTerminal: Bool
    public var stderrIsTerminal: Bool
    public var now: () -> Date
    /// Where stdout goes (a file descriptor, so exports can stream).
    public var stdoutFD: Int32
    private var stdoutBuffer: [UInt8] = []
    private var stderrLines: [String] = []
    public var captureStderr = false
    var parsed = ParsedArguments()

    public init(environment: [String: String] = ProcessInfo.processInfo.environment,
                stdoutFD: Int32 = 1, stdoutIsTerminal: Bool = isatty(1) == 1, stderrIsTerminal: Bool = isatty(2) == 1,
                now: @escaping () -> Date = Date.init) {
        self.environment = environment
        self.stdoutFD = stdoutFD
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.now = now
    }

    public var nowUnix: Int64 { Int64(now().timeIntervalSince1970.rounded(.down)) }

    /// The database path from `--db`, `WXDB_DB`, or the default.
    public var databasePath: String {
        if let db = parsed.value("db") { return db }
        if let db = environment["WXDB_DB"], !db.isEmpty { return db }
        return defaultDatabasePath(environment: environment)
    }

    public var quiet: Bool { parsed.flag("quiet") }
    public var verbose: Bool { parsed.flag("verbose") }

    /// Opens the database (creating and migrating it on first use).
    /// Writers wait this long for another process's write to finish before giving up; generous,
    /// because an hourly job is better late than failed.
    public static let busyTimeoutMilliseconds: Int32 = 30_000

    public func openStore(create: Bool = true, access: Store.Access = .write) throws -> Store {
        let store = try Store.open(path: databasePath, create: create, busyTimeoutMilliseconds: Self.busyTimeoutMilliseconds,
                                   access: access)
        if let reason = store.readOnlyReason {
            note("Note: \(store.path) is read-only for you (\(reason)); reading it without changing anything")
        }
        return store
    }

    /// Where a command's `--output` goes (stdout when nil): every command that writes a file opens it
    /// here, so none can overwrite the database or follow a planted link.
    func outputFile(_ path: String?) throws -> OutputFile {
        let db = databasePath
        let real = realpath(db, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? db
        let protected = [db, db + "-wal", db + "-shm", db + "-journal", db + ".ingest-lock", real + ".ingest-lock"]
        return try OutputFile(path: path, stdout: stdoutFD, protected: protected)
    }

    /// Writes to stdout (buffered; flushed at exit and by `flush`).
    public func out(_ text: String) {
        stdoutBuffer.append(contentsOf: text.utf8)
        if stdoutBuffer.count > 1 << 16 { flush() }
    }

    public func flush() {
        guard !stdoutBuffer.isEmpty else { return }
        stdoutBuffer.withUnsafeBytes { writeAll(stdoutFD, $0) }
        stdoutBuffer.removeAll(keepingCapacity: true)
    }

    /// A CSV writer on stdout, after what `out` has buffered.
    public func csvWriter() -> CSVWriter {
        flush()
        return CSVWriter(fileDescriptor: stdoutFD)
    }

    /// Writes one line to stderr, unbuffered.
    public func err(_ line: String) {
        if captureStderr {
            stderrLines.append(line)
            return
        }
        let text = line + "\n"
        Array(text.utf8).withUnsafeBytes { writeAll(2, $0) }
    }

    /// A note on stderr unless `--quiet`.
    public func note(_ line: String) { if !quiet { err(line) } }

    public var capturedStderr: [String] { stderrLines }

    /// The output format of a command that prints rows: `--format`, else `table` (on a terminal or
    /// not, so a script sees the same text a person does unless it asks for csv or json).
    public func format() throws -> String {
        let allowed = ["table", "csv", "json"]
        if let format = parsed.value("format") {
            guard allowed.contains(format) else {
                throw UsageError("--format must be one of \(allowed.joined(separator: ", ")), not '\(format)'")
            }
            return format
        }
        return "table"
    }
}

func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}
