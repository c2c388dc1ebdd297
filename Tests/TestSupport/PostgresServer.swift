// A throwaway PostgreSQL server for the tests, as the replay server stands in for Open-Meteo:
// `initdb` into a scratch folder, a free port on 127.0.0.1, the socket in that folder. As root it
// runs as the `postgres` user (the server refuses to run as root). One server per test process,
// started by the first test that asks, shared, stopped and deleted when the process exits. A test
// that stops and starts its server (a restart between runs) makes a private one (`makePrivate`).
// Where PostgreSQL's programs are missing its tests are skipped with the reason, except under
// CI=true, where they run and fail.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a PostgreSQL test server could not be had.
public struct PostgresServerError: Error, CustomStringConvertible {
    public let description: String
}

/// The test process's PostgreSQL server.
public final class PostgresServer: Sendable {
    /// The folder holding the data directory, the socket and the log.
    public let folder: String
    public let port: Int
    /// pg_ctl's start command (same data folder, port and options every time).
    private let startCommand: String
    /// The superuser every test connects as.
    public let user = "wxdb"
    /// Its password, for TCP connections (the socket trusts local users; TCP wants the password).
    public let password: String

    /// The folder of initdb, pg_ctl and postgres, or nil when PostgreSQL is not installed.
    public static let programs: String? = {
        let fm = FileManager.default
        func has(_ folder: String) -> Bool {
            ["initdb", "pg_ctl", "postgres"].allSatisfy { fm.isExecutableFile(atPath: folder + "/" + $0) }
        }
        if let explicit = ProcessInfo.processInfo.environment["WXDB_PG_BIN"], has(explicit) { return explicit }
        let versions = (try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let folder = "/usr/lib/postgresql/\(version)/bin"
            if has(folder) { return folder }
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        where has(folder) {
            return folder
        }
        return nil
    }()

    /// Why PostgreSQL tests are skipped here, or nil when they run (always nil under CI=true,
    /// where a missing PostgreSQL fails them instead).
    public static let skipReason: String? = {
        if programs != nil || ProcessInfo.processInfo.environment["CI"] == "true" { return nil }
        return
            "PostgreSQL's programs (initdb, pg_ctl, postgres) are not installed (Debian: apt-get install postgresql-15); PostgreSQL tests skipped"
    }()

    /// Whether the PostgreSQL tests run here.
    public static var enabled: Bool { skipReason == nil }

    private static let started: Result<PostgresServer, PostgresServerError> = {
        do { return .success(try PostgresServer()) } catch let error as PostgresServerError {
            return .failure(error)
        } catch {
            return .failure(PostgresServerError(description: "\(error)"))
        }
    }()

    /// The shared server, started on first use.
    public static func shared() throws -> PostgresServer { try started.get() }

    /// A server of the caller's own, which it may stop and start (the shared one serves every
    /// suite at once); stopped and deleted by `remove()`, or when the process exits.
    public static func makePrivate() throws -> PostgresServer { try PostgresServer() }

    private static let asRoot = getuid() == 0

    private init() throws {
        guard let programs = Self.programs else {
            throw PostgresServerError(
                description:
                    "PostgreSQL's programs (initdb, pg_ctl, postgres) are not installed: apt-get install postgresql-15")
        }
        Self.removeAbandoned(programs: programs)
        var template = Array("/tmp/wxdb-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw PostgresServerError(description: "mkdtemp failed") }
        folder = String(cString: made)
        password = "pw-" + UUID().uuidString
        let data = folder + "/data"
        try (password + "\n").write(toFile: folder + "/pwfile", atomically: false, encoding: .utf8)
        try "\(getpid())\n".write(toFile: folder + "/owner.pid", atomically: false, encoding: .utf8)
        if Self.asRoot {
            guard Self.shell("chown -R postgres:postgres \(folder)") == 0 else {
                throw PostgresServerError(description: "could not give \(folder) to the postgres user")
            }
        }
        let stop = "\(programs)/pg_ctl -D \(data) -m immediate -s stop >/dev/null 2>&1"
        Self.addRemoval(folder, (Self.asRoot ? "runuser -u postgres -- " : "") + stop + "; rm -rf \(folder)")
        let initdb =
            "\(programs)/initdb -D \(data) -U \(user) --pwfile=\(folder)/pwfile --auth-local=trust"
            + " --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync --no-instructions"
        guard Self.run(initdb, log: folder + "/initdb.log") == 0 else {
            throw PostgresServerError(description: "initdb failed; see \(folder)/initdb.log")
        }
        for _ in 0..<5 {
            let port = Self.freePort()
            let options =
                "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
                + " -c full_page_writes=off -c max_connections=60 -c shared_buffers=32MB"
            let start = "\(programs)/pg_ctl -D \(data) -l \(folder)/server.log -w -t 120 -s -o '\(options)' start"
            if Self.run(start, log: folder + "/pg_ctl.log") == 0 {
                self.port = port
                startCommand = start
                return
            }
        }
        throw PostgresServerError(description: "the test PostgreSQL server did not start; see \(folder)/server.log")
    }

    /// Stops the server as `pg_ctl stop` does by default (fast: every session is ended, as by a
    /// restart or a shutdown), waiting until it is down; the data folder and port stay.
    public func stop() throws {
        guard let programs = Self.programs,
            Self.run("\(programs)/pg_ctl -D \(folder)/data -m fast -w -t 120 -s stop", log: folder + "/stop.log") == 0
        else { throw PostgresServerError(description: "pg_ctl stop failed; see \(folder)/stop.log") }
    }

    /// Starts it again on the same data folder and port, waiting until it takes connections.
    public func start() throws {
        guard Self.run(startCommand, log: folder + "/pg_ctl.log") == 0 else {
            throw PostgresServerError(
                description: "the test PostgreSQL server did not restart; see \(folder)/server.log")
        }
    }

    /// Stops a private server and deletes its folder.
    public func remove() {
        guard let command = Self.removal(folder) else { return }
        _ = Self.shell(command)
    }

    /// Stops and deletes the servers of test processes that died without their exit handler (a
    /// crash, SIGKILL): each folder names its owner's process id.
    private static func removeAbandoned(programs: String) {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for name in folders where name.hasPrefix("wxdb-pg-") {
            let folder = "/tmp/" + name
            guard let text = try? String(contentsOfFile: folder + "/owner.pid", encoding: .utf8),
                let owner = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            let stop = "\(programs)/pg_ctl -D \(folder)/data -m immediate -s stop >/dev/null 2>&1"
            _ = shell((asRoot ? "runuser -u postgres -- " : "") + stop + "; rm -rf \(folder)")
        }
    }

    /// A libpq connection string to `database` over the socket in the server's folder.
    public func conninfo(database: String = "postgres") -> String {
        "host=\(folder) port=\(port) user=\(user) dbname=\(database)"
    }

    /// A URI to `database` over TCP with a password (wrong-password and redaction tests).
    public func tcpURI(database: String = "postgres", password: String? = nil) -> String {
        "postgresql://\(user):\(password ?? self.password)@127.0.0.1:\(port)/\(database)"
    }

    /// A new, empty database, for one test; returns its name. Removed with the server.
    /// With `icuLocale` (e.g. "en-US") its text sorts by that ICU collation instead of bytewise,
    /// as a database created with a language's locale does.
    public func createDatabase(_ prefix: String = "t", icuLocale: String? = nil) throws -> String {
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())".replacingOccurrences(of: "-", with: "_")
        guard let programs = Self.programs else { throw PostgresServerError(description: "no createdb") }
        let collation = icuLocale.map { " --template=template0 --locale-provider=icu --icu-locale=\($0)" } ?? ""
        let status = Self.shell(
            "\(programs)/createdb -h \(folder) -p \(port) -U \(user)\(collation) \(name) >/dev/null 2>&1")
        guard status == 0 else { throw PostgresServerError(description: "createdb \(name) failed") }
        return name
    }

    /// Runs `command` as the server's user, its output into `log`; the exit status.
    private static func run(_ command: String, log: String) -> Int32 {
        let full = asRoot ? "runuser -u postgres -- \(command)" : command
        return shell("\(full) >\(log) 2>&1")
    }

    private static func shell(_ command: String) -> Int32 {
        let status = system(command)
        return status == -1 ? -1 : (status >> 8) & 0xFF
    }

    private static let removals = NSLock()
    /// What stops and deletes each server still running, by folder.
    nonisolated(unsafe) private static var toRemove: [String: String] = [:]

    private static func addRemoval(_ folder: String, _ command: String) {
        let first = removals.withLock {
            defer { toRemove[folder] = command }
            return toRemove.isEmpty
        }
        if first { atexit { PostgresServer.removeAll() } }
    }

    /// Takes the folder's removal command off the exit list.
    private static func removal(_ folder: String) -> String? {
        removals.withLock { toRemove.removeValue(forKey: folder) }
    }

    private static func removeAll() {
        let commands = removals.withLock {
            defer { toRemove.removeAll() }
            return Array(toRemove.values)
        }
        for command in commands { _ = system(command) }
    }

    /// A port nothing listens on now (the kernel's choice for port 0).
    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
