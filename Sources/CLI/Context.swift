import FoundationEssentials
import WxCore
import WxFetcher
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command writes, what environment it sees, and what time it is. Tests give their own.
///
/// Not `Sendable`: its output buffers and flags are plain mutable state, used by the one task that
/// runs the command (ingest's hooks are called in that task too).
public final class Context {
    /// Read when first used (`wxdb --version` never does).
    public lazy var environment: [String: String] = Context.processEnvironment()
    public var stdoutIsTerminal: Bool
    public var stderrIsTerminal: Bool
    public var now: @Sendable () -> Date
    /// How HTTP retries wait (tests inject a sleeper that records and returns at once).
    public var sleep: @Sendable (TimeInterval) async throws -> Void = HTTPClient.realSleep
    /// The API key a command resolved (`--api-key` or `WXDB_API_KEY`), so that the last error line
    /// can be scrubbed of it: server texts quoted in errors may carry it.
    var apiKey: String?
    /// Where stdout goes (a file descriptor, so exports can stream).
    public var stdoutFD: Int32
    private var stdoutBuffer: [UInt8] = []
    private var stderrLines: [String] = []
    public var captureStderr = false
    /// `--quiet` and `--verbose`, which every command takes.
    public var quiet = false
    public var verbose = false
    /// `--wide`: tables keep every column instead of fitting `Report.tableWidth` characters.
    public var wide = false

    public init(
        environment: [String: String]? = nil,
        stdoutFD: Int32 = 1, stdoutIsTerminal: Bool = isatty(1) == 1, stderrIsTerminal: Bool = isatty(2) == 1,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.stdoutFD = stdoutFD
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.now = now
        if let environment { self.environment = environment }
    }

    /// This process's environment, read from `environ`: what `ProcessInfo.processInfo.environment`
    /// gives (like getenv, the first of a name given twice), without setting up ProcessInfo at
    /// every start.
    public static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "="), environment[String(text[..<equals])] == nil {
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return environment
    }

    public var nowUnix: Int64 { Int64(now().timeIntervalSince1970.rounded(.down)) }

    /// Writers wait this long for another process's write to finish before giving up; generous,
    /// because an hourly job is better late than failed.
    public static let busyTimeoutMilliseconds: Int32 = 30_000

    /// Writes to stdout (buffered; flushed at exit and by `flush`).
    public func out(_ text: String) {
        stdoutBuffer.append(contentsOf: text.utf8)
        if stdoutBuffer.count > 1 << 16 { flush() }
    }

    public func flush() {
        guard !stdoutBuffer.isEmpty else { return }
        let code = stdoutBuffer.withUnsafeBytes { writeAll(stdoutFD, $0) }
        if code != 0 && stdoutError == nil { stdoutError = code }
        stdoutBuffer.removeAll(keepingCapacity: true)
    }

    /// The first failed write to stdout (errno), kept until the command ends.
    private(set) var stdoutError: Int32?

    /// Flushes stdout and throws when any write to it failed: a truncated answer must not exit 0.
    func finishOutput() throws {
        flush()
        if let code = stdoutError {
            stdoutError = nil
            throw OutputWriteError(code: code, path: nil)
        }
    }

    /// A CSV writer on stdout, after what `out` has buffered.
    public func csvWriter() -> CSVWriter {
        flush()
        return CSVWriter(fileDescriptor: stdoutFD)
    }

    /// Writes one line to stderr, unbuffered, its control characters escaped: messages quote
    /// station files and servers, and their bytes must not drive the terminal.
    public func err(_ text: String) {
        let line = text.escapingControls(keepingLines: true)
        if captureStderr {
            stderrLines.append(line)
            return
        }
        let text = line + "\n"
        Array(text.utf8).withUnsafeBytes { writeAll(2, $0) }
    }

    /// A note on stderr unless `--quiet`.
    public func note(_ line: String) { if !quiet { err(line) } }

    /// `text` without the API key: the last guard before a message reaches the terminal.
    func withoutAPIKey(_ text: String) -> String {
        HTTPClient.scrub(text, secret: apiKey ?? environment["WXDB_API_KEY"])
    }

    public var capturedStderr: [String] { stderrLines }
}

/// Writes all of `bytes` to `fd`; returns 0, or the errno of the write that failed.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        // A write of nothing would loop forever; treat it as the disk refusing more.
        if written == 0 { return ENOSPC }
        offset += written
    }
    return 0
}
