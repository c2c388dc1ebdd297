import Foundation
import TestSupport
import Testing
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxCLI

/// Issue #26 through the binary: outputs beside a symlinked database, device nodes, planted
/// permissions, full disks and leftover partial files.
@Suite("Hostile files and disks through the binary")
struct HostileLocalTests {
    static var binary: String? { LocalSafetyBinaryTests.binary }

    struct Outcome {
        var status: Int32
        var signalled: Bool
        var stdout: String
        var stderr: String
    }

    /// Runs `wxdb arguments` (through `sh -c script` when given, with the binary as "$0", and
    /// `unshare -m` first when `namespace`), stdout to `stdoutPath` when given, else a pipe.
    static func run(
        _ arguments: [String], environment: [String: String], stdoutPath: String? = nil, shell: String? = nil,
        namespace: Bool = false
    ) throws -> Outcome {
        let process = Process()
        if let shell {
            process.executableURL = URL(fileURLWithPath: namespace ? "/usr/bin/unshare" : "/bin/sh")
            process.arguments = (namespace ? ["-m", "/bin/sh"] : []) + ["-c", shell, binary!] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary!)
            process.arguments = arguments
        }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        var handle: FileHandle?
        if let stdoutPath {
            handle = FileHandle(forWritingAtPath: stdoutPath)
            process.standardOutput = handle
        } else {
            process.standardOutput = out
        }
        process.standardError = err
        try process.run()
        let stdout = stdoutPath == nil ? out.fileHandleForReading.readDataToEndOfFile() : Data()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try handle?.close()
        return Outcome(
            status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
            stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// A database with one location and a few observations.
    static func sandbox() async throws -> Sandbox {
        let box = Sandbox()
        let history = try HistoryBuilder(db: box.db, name: "Here")
        let issued: Int64 = 1_782_864_000 - 6 * 3600
        let times = (0..<24).map { issued + Int64($0) * 3600 }
        _ = try history.storeRun(
            issuedAt: issued, fetchedAt: issued + 600, times: times,
            columns: ["temperature_2m": times.map { Double($0 % 7) }])
        let csv = box.folder.appendingPathComponent("obs.csv").path
        try "time,temperature_2m\n2026-07-01T00:00Z,5\n2026-07-01T01:00Z,6\n".write(
            toFile: csv, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import", csv, "--location", "Here").code == 0)
        try FileManager.default.removeItem(atPath: csv)
        return box
    }

    static func fileID(_ path: String) -> (dev: UInt, ino: UInt, kind: mode_t)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (UInt(info.st_dev), UInt(info.st_ino), info.st_mode & S_IFMT)
    }

    static let outputs: [[String]] = [
        ["report", "--location", "Here"], ["export", "observations"]
    ]

    @Test(
        "an output naming the live WAL or shm through a symlinked --db is refused, and the WAL keeps its rows",
        arguments: ["-wal", "-shm"], outputs)
    func symlinkedDatabaseWAL(_ suffix: String, _ command: [String]) async throws {
        guard Self.binary != nil else { return }
        let box = try await Self.sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let link = box.folder.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: box.db)
        // A reader holding a snapshot keeps what is written next in the WAL, uncheckpointed.
        let reader = try SQLiteBackdoor(box.db).db
        try reader.execute("BEGIN")
        _ = try reader.scalarInt("SELECT count(*) FROM observations WHERE source = 'csv'")
        let csv = box.folder.appendingPathComponent("more.csv").path
        try "time,temperature_2m\n2026-07-02T00:00Z,7\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let imported = try Self.run(
            ["--db", link, "observe", "import", csv, "--location", "Here"], environment: box.environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let target = box.db + suffix
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        let id = Self.fileID(target)
        let result = try Self.run(["--db", link] + command + ["--output", target], environment: box.environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("the database's own file"), "\(result.stderr)")
        #expect(Self.fileID(target)?.ino == id?.ino)
        // The shm's read marks move with every reader; the WAL's frames must not.
        if suffix == "-wal" { #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before) }
        try reader.execute("COMMIT")
        #expect(try reader.scalarInt("SELECT count(*) FROM observations WHERE source = 'csv'") == 3)
    }

    @Test("/dev/stdout-style links write to stdout, device nodes and fifos in place, never replaced")
    func specialFilesWrittenInPlace() async throws {
        guard Self.binary != nil else { return }
        let box = try await Self.sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let folder = box.folder.path
        // The system's name for our stdout, as /dev/stdout is.
        let stdoutLink = folder + "/stdout"
        try FileManager.default.createSymbolicLink(atPath: stdoutLink, withDestinationPath: "/proc/self/fd/1")
        let captured = folder + "/captured.html"
        _ = FileManager.default.createFile(atPath: captured, contents: nil)
        for command in Self.outputs {
            let result = try Self.run(
                ["--db", box.db] + command + ["--output", stdoutLink], environment: box.environment,
                stdoutPath: captured)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.fileID(stdoutLink)?.kind == S_IFLNK)
            let text = try String(contentsOfFile: captured, encoding: .utf8)
            #expect(text.contains(command[0] == "report" ? "</html>" : "2026-07-01T01:00:00Z"))
        }
        // A fifo: written in place for the reader at its other end.
        let fifo = folder + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The reader gets a thread of its own: `Self.run` blocks this one, and a Task could wait for a
        // pool thread that every other blocked test holds (the export would then wait for its reader forever).
        let read = FifoRead()
        let reader = Thread {
            read.data = FileHandle(forReadingAtPath: fifo)?.readDataToEndOfFile() ?? Data()
            read.done.signal()
        }
        reader.start()
        let toFifo = try Self.run(
            ["--db", box.db, "export", "observations", "--output", fifo], environment: box.environment)
        #expect(toFifo.status == 0, "\(toFifo.stderr)")
        read.done.wait()
        #expect(String(decoding: read.data, as: UTF8.self).contains("2026-07-01T00:00:00Z"))
        #expect(Self.fileID(fifo)?.kind == S_IFIFO)
        guard geteuid() == 0 else { return }
        // Device nodes (root only): a null device stays a device; a disk is refused.
        let null = folder + "/null"
        #expect(mknod(null, S_IFCHR | 0o666, Self.makedev(1, 3)) == 0)
        let disk = folder + "/disk"
        #expect(mknod(disk, S_IFBLK | 0o600, Self.makedev(7, 200)) == 0)
        for command in Self.outputs {
            let result = try Self.run(
                ["--db", box.db] + command + ["--output", null], environment: box.environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.fileID(null)?.kind == S_IFCHR)
            let refused = try Self.run(
                ["--db", box.db] + command + ["--output", disk], environment: box.environment)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("is a block device"), "\(refused.stderr)")
            #expect(Self.fileID(disk)?.kind == S_IFBLK)
        }
        #expect(try leftovers(folder).isEmpty)
    }

    static func makedev(_ major: UInt32, _ minor: UInt32) -> dev_t {
        // glibc's encoding of gnu_dev_makedev, which Swift does not import.
        let ma = dev_t(major), mi = dev_t(minor)
        return ((ma & 0xfff) << 8) | ((ma & ~0xfff) << 32) | (mi & 0xff) | ((mi & ~0xff) << 12)
    }

    func leftovers(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("wxdb-partial") }
    }

    @Test(
        "an output takes the mode of an old file only when this user owns it, and never setuid/setgid/sticky",
        arguments: [
            (planter: "other", mode: 0o666), (planter: "other", mode: 0o6777), (planter: "self", mode: 0o4755),
            (planter: "self", mode: 0o1640)
        ], outputs)
    func plantedModes(_ planted: (planter: String, mode: Int), _ command: [String]) async throws {
        guard Self.binary != nil else { return }
        if planted.planter == "other" && geteuid() != 0 { return }
        let box = try await Self.sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let shared = box.folder.appendingPathComponent("shared").path
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        chmod(shared, 0o1777)
        let out = shared + "/out.txt"
        try "planted\n".write(toFile: out, atomically: true, encoding: .utf8)
        if planted.planter == "other" { chown(out, 65534, 65534) }
        chmod(out, mode_t(planted.mode))
        let result = try Self.run(
            ["--db", box.db] + command + ["--output", out], environment: box.environment,
            shell: "umask 022; exec \"$0\" \"$@\"")
        #expect(result.status == 0, "\(result.stderr)")
        var info = stat()
        #expect(lstat(out, &info) == 0)
        let expected = planted.planter == "other" ? 0o644 : planted.mode & 0o777
        #expect(Int(info.st_mode & 0o7777) == expected)
        #expect(info.st_uid == geteuid())
    }

    static let fullOutputs: [[String]] = [
        ["report", "--location", "Here"], ["export", "observations"],
        ["query", "runs", "--location", "Here", "--from", "2026-06-30", "--to", "2026-07-03", "--format", "json"],
        [
            "query", "verify", "--location", "Here", "--source", "csv", "--from", "2026-06-30", "--to",
            "2026-07-03", "--format", "json"
        ], ["stats", "--format", "json"],
        ["locations", "list"]
    ]

    @Test("stdout on a full disk (/dev/full) exits 1 with a clear message", arguments: fullOutputs)
    func fullStdout(_ command: [String]) async throws {
        guard Self.binary != nil else { return }
        let box = try await Self.sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let result = try Self.run(["--db", box.db] + command, environment: box.environment, stdoutPath: "/dev/full")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("disk is full") || result.stderr.contains("No space left"), "\(result.stderr)")
    }

    @Test(
        "an --output on a full file system exits 1 and leaves the old file whole (and a full device exits 1)",
        arguments: outputs)
    func fullOutputFile(_ command: [String]) async throws {
        guard Self.binary != nil, geteuid() == 0 else { return }
        let box = try await Self.sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        if command[0] == "export" {
            // Enough rows to outgrow the space left.
            let csv = box.folder.appendingPathComponent("many.csv").path
            let rows = (0..<200).map { String(format: "2026-08-%02dT%02d:00Z,%d", 1 + $0 / 24, $0 % 24, $0) }
            try ("time,temperature_2m\n" + rows.joined(separator: "\n") + "\n").write(
                toFile: csv, atomically: true, encoding: .utf8)
            #expect(await box.run("observe", "import", csv, "--location", "Here").code == 0)
        }
        // A two-page tmpfs in a private mount namespace: the old output takes one page, the new one
        // needs more than the other.
        let mount = box.folder.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let script = """
            mount -t tmpfs -o size=8k tmpfs "$D" || exit 99
            printf 'the complete older output\\n' > "$D/old.txt"
            "$0" "$@"; code=$?
            echo "---"; cat "$D/old.txt"; ls -a "$D"; exit $code
            """
        var environment = box.environment
        environment["D"] = mount
        let result = try Self.run(
            ["--db", box.db] + command + ["--output", mount + "/old.txt"], environment: environment,
            shell: script, namespace: true)
        if result.status == 99 { return }  // no mount namespace here
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)")
        #expect(
            result.stderr.contains("disk is full") || result.stderr.contains("No space left"), "\(result.stderr)")
        #expect(!result.stderr.contains("Wrote"), "\(result.stderr)")
        #expect(result.stdout.contains("---\nthe complete older output\n"), "\(result.stdout)")
        #expect(!result.stdout.contains("wxdb-partial"), "\(result.stdout)")
        // A full device of our own (never the system's /dev/full, which old code would replace).
        let full = box.folder.appendingPathComponent("full").path
        #expect(mknod(full, S_IFCHR | 0o666, Self.makedev(1, 7)) == 0)
        let toFull = try Self.run(["--db", box.db] + command + ["--output", full], environment: box.environment)
        #expect(toFull.status == 1, "\(toFull.stderr)")
        #expect(
            toFull.stderr.contains("disk is full") || toFull.stderr.contains("No space left"), "\(toFull.stderr)")
        #expect(Self.fileID(full)?.kind == S_IFCHR)
    }

    /// The pid of a process that has ended.
    static func deadPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test(
        "a killed writer's partial file is removed by the next output to its folder and by doctor; a live writer's, another user's and a link are kept",
        arguments: ["export", "doctor"])
    func stalePartialFiles(_ cleaner: String) async throws {
        guard Self.binary != nil else { return }
        let box = try await Self.sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let folder = box.folder.path
        let dead = try Self.deadPID()
        let stale = ".out.csv.wxdb-partial-\(dead)-k1lled"
        let live = ".out.csv.wxdb-partial-\(getpid())-st1ll"
        let foreign = ".out.csv.wxdb-partial-\(dead)-f0reign"
        let link = ".out.csv.wxdb-partial-\(dead)-l1nk"
        for name in [stale, live, foreign] {
            try String(repeating: "x", count: 1000).write(
                toFile: folder + "/" + name, atomically: false, encoding: .utf8)
        }
        try FileManager.default.createSymbolicLink(atPath: folder + "/" + link, withDestinationPath: box.db)
        let asRoot = geteuid() == 0
        if asRoot { chown(folder + "/" + foreign, 65534, 65534) }
        let arguments =
            cleaner == "doctor"
            ? ["--db", box.db, "doctor"] : ["--db", box.db, "export", "observations", "--output", folder + "/out.csv"]
        let result = try Self.run(arguments, environment: box.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let left = Set(try leftovers(folder))
        #expect(!left.contains(stale))
        #expect(left.contains(live))
        #expect(left.contains(link))
        #expect(left.contains(foreign) == asRoot)
        if cleaner == "doctor" {
            #expect(result.stdout.contains("removed 1 left by killed writers"), "\(result.stdout)")
        }
    }
}

/// What the fifo's reader thread read; `done` is signalled once `data` is set.
private final class FifoRead: @unchecked Sendable {
    var data = Data()
    let done = DispatchSemaphore(value: 0)
}
