import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite

@testable import WxCLI
@testable import WxStore
@testable import WxStoreSQLite

/// Issue 11: hostile neighbours and odd files. Another local user must not be able to make wxdb
/// overwrite a file, a schedule must not stop or replace another, odd paths get a clear answer.
@Suite("Local safety: outputs, locks, paths, schedules, future times")
struct LocalSafetyTests {
    func sandbox() async -> Sandbox {
        let box = Sandbox()
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2", "--timezone", "UTC")
        let csv = box.folder.appendingPathComponent("obs.csv").path
        try? "time,temperature_2m\n2026-07-01T00:00Z,5\n2026-07-01T01:00Z,6\n".write(
            toFile: csv, atomically: true, encoding: .utf8)
        await box.run("observe", "import", csv, "--location", "Here")
        return box
    }

    func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    func leftovers(_ box: Sandbox) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter { $0.contains("wxdb-partial") }
    }

    @Test("export --output never follows a planted link: not the old pid-named temporary, not the output itself")
    func plantedLinks() async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let victim = box.folder.appendingPathComponent("victim.txt").path
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        let out = box.folder.appendingPathComponent("out.csv").path
        // The names the old code used, for this and the next pids, and the output name itself.
        for pid in getpid()..<(getpid() + 50) {
            try FileManager.default.createSymbolicLink(
                atPath: "\(out).wxdb-partial-\(pid)", withDestinationPath: victim)
        }
        try FileManager.default.createSymbolicLink(atPath: out, withDestinationPath: victim)
        let result = await box.run("export", "observations", "--output", out)
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(contents(victim) == "precious\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: out)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect(contents(out)?.hasPrefix("location,source,time") == true)
        // Only the planted links remain; wxdb's own temporary file is gone.
        #expect(try leftovers(box).count == 50)
    }

    @Test("a replaced output keeps its permissions (0600 stays 0600)")
    func keepsPermissions() async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let out = box.folder.appendingPathComponent("private.csv").path
        #expect(
            FileManager.default.createFile(
                atPath: out, contents: Data("old".utf8), attributes: [.posixPermissions: 0o600]))
        #expect(await box.run("export", "observations", "--output", out).code == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(contents(out)?.hasPrefix("location") == true)
    }

    @Test(
        "an output that is the database or one of its files is refused, however it is spelled",
        arguments: ["same", "dotdot", "symlink", "hardlink", "wal", "shm", "lock"])
    func outputIsTheDatabase(_ spelling: String) async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let fm = FileManager.default
        let before = try Data(contentsOf: URL(fileURLWithPath: box.db))
        var output = box.db
        switch spelling {
        case "dotdot":
            try fm.createDirectory(
                atPath: box.folder.appendingPathComponent("sub").path, withIntermediateDirectories: true)
            output = box.folder.appendingPathComponent("sub/../wxdb.sqlite").path
        case "symlink":
            output = box.folder.appendingPathComponent("alias.csv").path
            try fm.createSymbolicLink(atPath: output, withDestinationPath: box.db)
        case "hardlink":
            output = box.folder.appendingPathComponent("hard.csv").path
            try fm.linkItem(atPath: box.db, toPath: output)
        case "wal": output = box.db + "-wal"
        case "shm": output = box.db + "-shm"
        case "lock": output = box.db + ".ingest-lock"
        default: break
        }
        let result = await box.run("export", "daily", "--output", output)
        #expect(result.code == 1)
        #expect(result.stderrText.contains("the database's own file"), "\(result.stderrText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.db)) == before)
        #expect(await box.run("stats").code == 0)
    }

    @Test("a 249-character output name is written (the temporary name stays short)")
    func longOutputName() async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let out = box.folder.appendingPathComponent(String(repeating: "a", count: 245) + ".csv").path
        let result = await box.run("export", "observations", "--output", out)
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(FileManager.default.fileExists(atPath: out))
        let tooLong = box.folder.appendingPathComponent(String(repeating: "b", count: 256)).path
        let refused = await box.run("export", "observations", "--output", tooLong)
        #expect(refused.code == 1)
        #expect(refused.stderrText.contains("at most 255"), "\(refused.stderrText)")
        let missing = await box.run(
            "export", "observations", "--output", box.folder.appendingPathComponent("no/such/x.csv").path)
        #expect(missing.stderrText.contains("does not exist"), "\(missing.stderrText)")
    }

    @Test("a planted link at the ingest lock is neither followed nor truncated")
    func lockSymlink() async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let victim = box.folder.appendingPathComponent("victim.conf").path
        try "setting=1\n".write(toFile: victim, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: box.db + ".ingest-lock", withDestinationPath: victim)
        let result = await box.run("ingest")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("symbolic link"), "\(result.stderrText)")
        #expect(contents(victim) == "setting=1\n")
        // A hard link to someone else's file (two names) is left alone too.
        try FileManager.default.removeItem(atPath: box.db + ".ingest-lock")
        try FileManager.default.linkItem(atPath: victim, toPath: box.db + ".ingest-lock")
        #expect(throws: ProcessLock.Failure.self) { _ = try ProcessLock(databasePath: box.db, timeout: 0) }
        #expect(contents(victim) == "setting=1\n")
    }

    @Test(
        "--db that cannot be a database file gets a clear error, no crash and no hang",
        arguments: ["folder", "fifo", "empty", "memory"])
    func oddDatabasePaths(_ kind: String) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        var path = box.folder.appendingPathComponent("odd").path
        switch kind {
        case "folder": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "empty": path = ""
        default: path = ":memory:"
        }
        for command in [
            ["doctor"], ["stats"], ["locations", "add", "A", "--lat", "1", "--lon", "2"], ["locations", "list"]
        ] {
            let result = await box.run(["--db", path] + command)
            #expect(result.code == 1, "\(command): \(result.stderrText)")
            #expect(result.stderrText.hasPrefix("Error: --db "), "\(result.stderrText)")
            #expect(!result.stderrText.contains("Added"))
        }
    }

    @Test("an immutable (read-only, no -wal/-shm) open reads a file whose name holds URI syntax")
    func immutableOddName() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let path = box.folder.path + "//odd name %41 ?x=1 #frag.sqlite"
        #expect(await box.run("--db", path, "locations", "add", "Here", "--lat", "1", "--lon", "2").code == 0)
        var options = Database.Options()
        options.immutable = true
        let db = try Database(path: path, options: options)
        #expect(try db.scalarText("SELECT name FROM locations") == "Here")
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
    }

    @Test("a missing migration record is reported by doctor and by every other command alike")
    func missingMigrationRecord() async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        do {
            let db = try Database(path: box.db)
            try db.run("DELETE FROM schema_migrations WHERE name = ?", [.text(Schema.migrations[2].name)])
        }
        let doctor = await box.run("doctor")
        #expect(doctor.code == 1)
        #expect(doctor.stdout.contains("does not record migration \(Schema.migrations[2].name)"), "\(doctor.stdout)")
        let stats = await box.run("stats")
        #expect(stats.code == 1)
        #expect(stats.stderrText.contains("does not record migration"), "\(stats.stderrText)")
        #expect(!stats.stderrText.contains("SQLite error"))
    }

    // MARK: Schedules

    /// The ExecStart words as systemd reads them: double quotes with C escapes, `$$` and `%%`.
    func systemdWords(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var chars = Array(line)[...]
        while let char = chars.popFirst() {
            switch char {
            case "\"": quoted.toggle()
            case "\\" where quoted: if let next = chars.popFirst() { current.append(next) }
            case "$", "%":
                current.append(char)
                if chars.first == char { chars.removeFirst() }
            case " " where !quoted:
                if !current.isEmpty { words.append(current) }
                current = ""
            default: current.append(char)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    @Test(
        "schedule writes paths with % $ quotes backslashes and spaces so cron's shell and systemd read them back exactly"
    )
    func scheduleEscaping() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let folder = box.folder.appendingPathComponent("a b $HOME 50% it's \"q\" back\\slash")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let db = folder.appendingPathComponent("wx%d$b.sqlite").path
        box.environment["WXDB_DB"] = db

        let cron = await box.run("schedule", "--cron")
        #expect(cron.code == 0)
        let line = try #require(cron.stdout.split(separator: "\n").first { !$0.hasPrefix("#") }.map(String.init))
        #expect(
            !line.replacingOccurrences(of: "\\%", with: "").contains("%"), "an unescaped % ends the command in cron")
        #expect(line.hasSuffix("# wxdb-schedule db=" + db.replacingOccurrences(of: "%", with: "\\%")))
        // What cron runs: the line after its five time fields, with \% turned back into %, by sh.
        let command = line.split(separator: " ", maxSplits: 5)[5].replacingOccurrences(of: "\\%", with: "%")
        let binary = ScheduleCommand.shell(ScheduleCommand.executablePath())
        #expect(command.hasPrefix(binary + " "))
        let probe = "printf '%s\\n'" + command.dropFirst(binary.count)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", probe]
        try shell.run()
        shell.waitUntilExit()
        let log = try #require(contents(folder.appendingPathComponent("wxdb.log").path))
        #expect(log == "--db\n\(db)\n--quiet\ningest\n")

        let systemd = await box.run("schedule", "--systemd")
        let exec = try #require(systemd.stdout.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        #expect(
            Array(systemdWords(String(exec.dropFirst("ExecStart=".count))).dropFirst()) == [
                "--db", db, "--quiet", "ingest"
            ])
    }

    @Test(
        "a path with a newline cannot inject a second cron entry: it is refused",
        arguments: ["--cron", "--systemd", "--launchd"])
    func scheduleNewline(_ kind: String) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        box.environment["WXDB_DB"] = box.folder.path + "/x\n* * * * * touch /tmp/pwned #/wxdb.sqlite"
        let result = await box.run("schedule", kind)
        #expect(result.code == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText.contains("newline"))
    }

    @Test(
        "install-schedule cron replaces only the same database's line and keeps every other line",
        .enabled(if: LocalSafetyBinaryTests.binary != nil, LocalSafetyBinaryTests.needsBinary))
    func installScheduleCron() async throws {
        let binary = try #require(LocalSafetyBinaryTests.binary)
        let folder = Scratch.folder("cron")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("bin"), withIntermediateDirectories: true)
        let table = folder.appendingPathComponent("crontab").path
        // A crontab that keeps its table in a file.
        let fake = folder.appendingPathComponent("bin/crontab").path
        try "#!/bin/sh\nif [ \"$1\" = -l ]; then cat '\(table)' 2>/dev/null || exit 1; else cat > '\(table)'; fi\n"
            .write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let etl = "30 * * * * /opt/etl/run ingest >> /var/log/wxdb-etl.log"
        try (etl + "\n").write(toFile: table, atomically: true, encoding: .utf8)
        func install(_ name: String) throws {
            let process = Process()
            process.executableURL = URL(
                fileURLWithPath: packageRoot.appendingPathComponent("Scripts/install-schedule").path)
            process.arguments = ["cron", "--db", folder.appendingPathComponent(name).path, "--wxdb", binary]
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] =
                folder.appendingPathComponent("bin").path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        for name in ["projA.sqlite", "projB.sqlite", "proj 50%.sqlite", "projA.sqlite"] { try install(name) }
        let lines = try #require(contents(table)).split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.contains(etl))
        for name in ["projA.sqlite", "projB.sqlite", "proj 50\\%.sqlite"] {
            #expect(
                lines.filter { $0.hasSuffix("# wxdb-schedule db=" + folder.appendingPathComponent(name).path) }.count
                    == 1, "\(name): \(lines)")
        }
    }

    @Test(
        "install-schedule systemd names units per database: a second database never replaces the first's timer",
        .enabled(if: LocalSafetyBinaryTests.binary != nil, LocalSafetyBinaryTests.needsBinary))
    func installScheduleSystemd() async throws {
        let binary = try #require(LocalSafetyBinaryTests.binary)
        let folder = Scratch.folder("systemd")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bin = folder.appendingPathComponent("bin")
        let units = folder.appendingPathComponent("config/systemd/user")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
        let calls = folder.appendingPathComponent("systemctl-calls").path
        try "#!/bin/sh\necho \"$*\" >> '\(calls)'\n".write(
            toFile: bin.appendingPathComponent("systemctl").path, atomically: true, encoding: .utf8)
        chmod(bin.appendingPathComponent("systemctl").path, 0o755)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["XDG_CONFIG_HOME"] = folder.appendingPathComponent("config").path
        environment["HOME"] = folder.path
        environment.removeValue(forKey: "XDG_DATA_HOME")
        func shell(_ arguments: [String]) throws -> String {
            let process = Process()
            let out = Pipe()
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
            process.environment = environment
            process.standardOutput = out
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(arguments)")
            return text
        }
        let script = packageRoot.appendingPathComponent("Scripts/install-schedule").path
        let a = folder.appendingPathComponent("projA.sqlite").path,
            b = folder.appendingPathComponent("projB.sqlite").path
        // An install from before per-database names: projA's service under the shared name.
        let old = try shell([binary, "--db", a, "schedule", "--systemd"])
        let execLine = try #require(old.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        try "[Service]\n\(execLine)\n".write(
            to: units.appendingPathComponent("wxdb-ingest.service"), atomically: true, encoding: .utf8)
        for db in [a, b] { _ = try shell([script, "systemd", "--db", db, "--wxdb", binary]) }
        _ = try shell([script, "systemd", "--wxdb", binary])  // the default database keeps the old name
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: units.path))
        #expect(files.count == 6, "\(files.sorted())")
        #expect(files.contains("wxdb-ingest.timer"))
        let services = try files.filter { $0.hasSuffix(".service") }.map {
            try String(contentsOf: units.appendingPathComponent($0), encoding: .utf8)
        }
        for db in [a, b] { #expect(services.filter { $0.contains("--db \"\(db)\"") }.count == 1, "\(db)") }
        let log = try #require(contents(calls))
        #expect(log.contains("disable --now wxdb-ingest.timer"))
        #expect(log.components(separatedBy: "enable --now wxdb-ingest").count == 4)
    }

    // MARK: Future times and odd input

    @Test("a station observation imported with the clock a day ahead can be corrected with the right clock")
    func correctedObservation() async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let csv = box.folder.appendingPathComponent("station.csv").path
        let right = box.now
        box.now = right.addingTimeInterval(86400)
        try "time,temperature_2m\n2026-07-01T00:00Z,50\n".write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        box.now = right
        try "time,temperature_2m\n2026-07-01T00:00Z,5\n".write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        let db = try Database(path: box.db)
        #expect(
            try db.scalarInt("SELECT count(*) FROM observations WHERE source = 'station' AND temperature_2m = 5") == 1)
    }

    @Test("a response's past ends at its own current time, however far ahead the fetch time is")
    func analysisEndsAtServerNow() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let store = try SQLiteStore.open(path: box.db)
        let location = try store.addLocation(
            name: "C", latitude: 55.68, longitude: 12.57, elevation: nil, timezone: "UTC",
            models: ["best_match"], now: 0)
        let data = try Data(
            contentsOf: URL(fileURLWithPath: box.fixture("forecast-current-hourly-daily-iso8601-copenhagen.json")))
        let response = try ForecastDecoder.decodeSingle(data, defaultModel: "best_match", onlyModel: nil)
        let current = try #require(response.current?.time)
        let future = CivilTime.parseLabel("2099-01-01")!
        _ = try store.store(response, for: location, fetch: FetchRecord(fetchedAt: future, origin: .import))
        let latest =
            try store.db.scalarInt("SELECT max(time) FROM observations WHERE source = 'analysis:best_match'") ?? 0
        #expect(latest <= current)
        #expect(
            try store.db.scalarInt("SELECT count(*) FROM observations WHERE source = 'analysis:best_match'") ?? 0 > 0)
    }

    @Test("observe import reads /dev/stdin and other pipes")
    func readsPipes() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let text = "time,temperature_2m\n2026-07-01T00:00Z,5\n"
        _ = text.withCString { write(fds[1], $0, strlen($0)) }
        close(fds[1])
        defer { close(fds[0]) }
        #expect(try readInput("/dev/fd/\(fds[0])") == Data(text.utf8))
        #expect(throws: CLIError.self) { _ = try readInput("/nonexistent/x.csv") }
    }

    @Test("a UTF-16 CSV and the hour a DST change skips get their own clear messages")
    func csvEncodingAndGap() async throws {
        let box = await sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let path = box.folder.appendingPathComponent("u16.csv").path
        try "time,temperature_2m\n2026-07-01T00:00Z,1\n".data(using: .utf16)!.write(to: URL(fileURLWithPath: path))
        let utf16 = await box.run("observe", "import", path, "--location", "Here")
        #expect(utf16.code == 1)
        #expect(utf16.stderrText.contains("UTF-16"), "\(utf16.stderrText)")
        #expect(!utf16.stderrText.contains("..") && !utf16.stderrText.contains("Line 1"))
        let gap = box.folder.appendingPathComponent("gap.csv").path
        try "time,temperature_2m\n2026-03-29T01:00,1\n2026-03-29T02:00,2\n2026-03-29T03:00,3\n".write(
            toFile: gap, atomically: true, encoding: .utf8)
        let result = await box.run("observe", "import", gap, "--location", "Here", "--timezone", "Europe/Berlin")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("line 3: time '2026-03-29T02:00' does not exist"), "\(result.stderrText)")
    }

    // MARK: Prune

    @Test("prune that fails partway says what it already pruned")
    func prunePartialFailure() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        // 25 small runs: prune works in batches of 20, and the second batch is made to fail.
        let history = try HistoryBuilder(db: box.db)
        let t0 = GeneratedHistory.t0
        for k in 0..<25 {
            let issued = t0 + Int64(k) * 3600
            let times = (0..<10).map { issued + Int64($0) * 3600 }
            try history.storeRun(
                issuedAt: issued, fetchedAt: issued + 60, times: times,
                columns: ["temperature_2m": times.map { _ in Double(k) }], recordAnalysis: false)
        }
        for hour in 0..<40 {
            try history.observe(source: "station", time: t0 + Int64(hour) * 3600, ["temperature_2m": 1])
        }
        try history.store.db.execute(
            "CREATE TRIGGER fail_prune BEFORE UPDATE OF pruned_at ON forecast_runs WHEN NEW.id = 22 BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )
        box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(9) + 86400 * 30))
        let result = await box.run(["prune", "--keep-days", "1"])
        #expect(result.code == 1)
        #expect(result.stderrText.contains("Pruned 20 runs"), "\(result.stderrText)")
        #expect(result.stderrText.contains("stay pruned"))
        #expect(!result.stderrText.contains("nothing was stored"))
    }

    struct Room: Sendable, CustomStringConvertible {
        var database: Int64, wal: Int64, free: Int64?, refused: Bool
        var description: String { "\(database) + \(wal) with \(free.map(String.init) ?? "unknown") free" }
    }
    static let rooms: [Room] = [
        Room(database: 100 << 20, wal: 0, free: 50 << 20, refused: true),
        Room(database: 100 << 20, wal: 20 << 20, free: 110 << 20, refused: true),
        Room(database: 100 << 20, wal: 0, free: 200 << 20, refused: false),
        Room(database: 100 << 20, wal: 0, free: nil, refused: false)
    ]

    @Test("VACUUM does not start without about the database's size free beside it", arguments: rooms)
    func vacuumNeedsRoom(_ room: Room) {
        let refusal = PruneCommand.vacuumRefusal(
            databaseBytes: room.database, walBytes: room.wal, freeBytes: room.free, keepDays: 90)
        #expect((refusal != nil) == room.refused)
        if let refusal {
            #expect(refusal.hasPrefix("Did not VACUUM: it needs about \(bytes(room.database + room.wal)) free"))
        }
    }

    @Test("prune --vacuum says when a reader kept the WAL from shrinking")
    func vacuumWithReader() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        _ = try GeneratedHistory.build(box)
        let reader = try Database(path: box.db)
        try reader.execute("BEGIN")
        _ = try reader.scalarInt("SELECT count(*) FROM hourly_forecasts")
        box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(9) + 86400 * 30))
        let result = await box.run(["prune", "--keep-days", "1", "--vacuum"])
        try reader.execute("COMMIT")
        #expect(result.code == 0, "\(result.stderrText)")
        // Every run but the latest, which keeps its rows whatever its age.
        #expect(result.stderrText.contains("Pruned 9 runs"), "\(result.stderrText)")
        #expect(result.stderrText.contains("kept the -wal file"), "\(result.stderrText)")
    }
}

/// The faults of issue 11 that live in the process (signals) or in who runs it (permissions), through
/// the built binary: `.build/release/wxdb` when there is one, else `.build/debug/wxdb`.
@Suite("Local safety through the binary")
struct LocalSafetyBinaryTests {
    /// The newer of the two builds: a stale release binary would refuse a database this build migrated.
    static let binary = ["release", "debug"].map { packageRoot.appendingPathComponent(".build/\($0)/wxdb").path }
        .filter { FileManager.default.isExecutableFile(atPath: $0) }
        .max { modified($0) < modified($1) }

    /// Why the tests that run the built binary are skipped when there is none: they show as skipped, not passed.
    static let needsBinary: Comment = "needs a built wxdb (.build/release/wxdb or .build/debug/wxdb): run swift build"

    /// Root reads every file whatever its mode, so the read-only case runs as nobody through setpriv.
    static var canBeAnotherOwner: Bool {
        geteuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    static func modified(_ path: String) -> Date {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
    }

    struct Outcome {
        var status: Int32
        var signalled: Bool
        var stdout: String
        var stderr: String
    }

    /// Runs the binary (as `user` through setpriv when given) and waits for it.
    func run(_ arguments: [String], user: String? = nil, environment: [String: String]) throws -> Outcome {
        let process = Process()
        let out = Pipe(), err = Pipe()
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--", Self.binary!] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.binary!)
            process.arguments = arguments
        }
        process.environment = environment
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
            stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    @Test(
        "SIGTERM, SIGINT, SIGHUP and SIGUSR1 during export --output remove the partial file and keep the old output",
        .enabled(if: binary != nil, needsBinary), arguments: [SIGTERM, SIGINT, SIGHUP, SIGUSR1])
    func signalRemovesPartial(_ signalNumber: Int32) async throws {
        let binary = try #require(Self.binary)
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        // Enough observations that the export is still writing when the signal comes.
        let store = try SQLiteStore.open(path: box.db)
        let location = try store.addLocation(
            name: "Big", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: ["best_match"], now: 0)
        try store.db.transaction {
            for hour in 0..<50_000 {
                try store.upsertObservation(
                    locationID: location.id, source: "station", time: Int64(hour) * 3600,
                    values: Variables.hourly.indices.map { Double($0 + hour % 50) }, recordedAt: 0)
            }
        }
        let out = box.folder.appendingPathComponent("out.csv").path
        try "old\n".write(toFile: out, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--db", box.db, "export", "observations", "--output", out]
        process.environment = box.environment
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Step the process in short runs (SIGSTOP/SIGCONT) until its temporary file exists, then
        // signal it while it is stopped mid-export: however fast the build, the signal lands between
        // creating the file and renaming it.
        let pid = process.processIdentifier
        var seen = false
        for _ in 0..<100_000 where process.isRunning {
            kill(pid, SIGSTOP)
            if (try FileManager.default.contentsOfDirectory(atPath: box.folder.path)).contains(where: {
                $0.contains("wxdb-partial")
            }) {
                seen = true
                break
            }
            kill(pid, SIGCONT)
            usleep(50)
        }
        kill(pid, signalNumber)
        kill(pid, SIGCONT)
        while process.isRunning { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(seen)
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == signalNumber)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter { $0.contains("wxdb-partial") }
                .isEmpty)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "old\n")
    }

    @Test(
        "a read-only database (another owner, folder not writable) is read by reading commands, refused by writing ones, not called damaged",
        .enabled(if: binary != nil, needsBinary),
        .enabled(if: canBeAnotherOwner, "as root the file must belong to another user: needs /usr/bin/setpriv"))
    func readOnlyDatabase() async throws {
        let asRoot = geteuid() == 0
        let box = Sandbox()
        defer {
            chmod(box.folder.path, 0o755)
            try? FileManager.default.removeItem(at: box.folder)
        }
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2", "--timezone", "UTC")
        let csv = box.folder.appendingPathComponent("obs.csv").path
        try "time,temperature_2m\n2026-07-01T00:00Z,5\n".write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import", csv, "--location", "Here").code == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: box.folder.path) {
            chmod(box.folder.appendingPathComponent(name).path, 0o644)
        }
        chmod(box.folder.path, 0o755)
        if !asRoot {
            chmod(box.db, 0o444)
            chmod(box.folder.path, 0o555)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: box.db))
        let user = asRoot ? "65534" : nil
        var environment = box.environment
        environment["HOME"] = "/nonexistent"
        func wxdb(_ arguments: String...) throws -> Outcome {
            try run(["--db", box.db] + arguments, user: user, environment: environment)
        }

        let doctor = try wxdb("doctor")
        #expect(doctor.status == 0, "\(doctor.stdout)\(doctor.stderr)")
        #expect(doctor.stdout.contains("integrity         ok"))
        #expect(doctor.stderr.contains("read-only for you"))
        for reading in [["stats"], ["locations", "list"], ["export", "observations"], ["locations", "show", "Here"]] {
            let result = try run(["--db", box.db] + reading, user: user, environment: environment)
            #expect(result.status == 0, "\(reading): \(result.stderr)")
            #expect(
                result.stderr.components(separatedBy: "read-only for you").count == 2, "said once: \(result.stderr)")
        }
        #expect(try wxdb("export", "observations").stdout.contains("2026-07-01T00:00:00Z"))
        for writing in [
            ["locations", "add", "B", "--lat", "1", "--lon", "1"], ["observe", "import", csv, "--location", "Here"],
            ["prune", "--keep-days", "1"]
        ] {
            let result = try run(["--db", box.db] + writing, user: user, environment: environment)
            #expect(result.status == 1, "\(writing)")
            #expect(
                result.stderr.hasPrefix("Error: the database \(box.db) is read-only for you"),
                "\(writing): \(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.db)) == before)
        #expect(!FileManager.default.fileExists(atPath: box.db + "-wal"))
    }
}

@Suite("Pruned summaries after a time zone change")
struct SummaryZoneTests {
    func verify(_ box: Sandbox, _ extra: [String]) async throws -> (rows: [JSON], stderr: String) {
        let result = await box.run(["query", "verify", "--location", "Testville", "--format", "json"] + extra)
        #expect(result.code == 0, "\(result.stderrText)")
        return (try #require(try parseJSON(result.stdout)["rows"]?.arrayValue), result.stderrText)
    }

    @Test(
        "summaries keep the hours they were made over: after 'locations set --timezone' a pruned copy verifies like the unpruned one"
    )
    func zoneChangeAfterPrune() async throws {
        let pruned = Sandbox(), unpruned = Sandbox()
        defer {
            try? FileManager.default.removeItem(at: pruned.folder)
            try? FileManager.default.removeItem(at: unpruned.folder)
        }
        _ = try GeneratedHistory.build(pruned)  // Europe/Berlin
        _ = try GeneratedHistory.build(unpruned)
        pruned.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(9) + 86400 * 3))
        #expect(await pruned.run("prune", "--keep-days", "1").code == 0)
        for box in [pruned, unpruned] {
            #expect(await box.run("locations", "set", "Testville", "--timezone", "America/New_York").code == 0)
        }
        // Four whole Berlin days, written as instants: the days the summaries were made over.
        let start = GeneratedHistory.issued(2) + 86400
        let first = try #require(
            ZoneTime.span(ofDate: ZoneTime.date(of: start, timezone: "Europe/Berlin"), timezone: "Europe/Berlin"))
        let last = try #require(
            ZoneTime.span(
                ofDate: ZoneTime.date(of: start + 3 * 86400, timezone: "Europe/Berlin"), timezone: "Europe/Berlin"))
        let range = ["--from", CivilTime.isoUTC(first.start), "--to", CivilTime.isoUTC(last.end - 1)]
        for extra in [[], range] {
            let a = try await verify(pruned, extra), b = try await verify(unpruned, extra)
            #expect(a.rows.count == b.rows.count)
            for (x, y) in zip(a.rows, b.rows) {
                #expect(x["n"] == y["n"], "\(extra)")
                #expect(near(x["bias"]?.numberValue, y["bias"]?.numberValue ?? .nan, 1e-9))
            }
            #expect(!a.stderr.contains("left out"))
        }
        // New York dates cut the Berlin days at their ends: those are left out, and verify says so.
        let dates = [
            "--from", ZoneTime.date(of: start + 86400, timezone: "America/New_York"),
            "--to", ZoneTime.date(of: start + 2 * 86400, timezone: "America/New_York")
        ]
        let cut = try await verify(pruned, dates)
        #expect(cut.stderr.contains("left out"), "\(cut.stderr)")
    }
}
