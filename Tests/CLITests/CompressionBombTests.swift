// Issue 26, point 5: gzip, brotli and zstd bombs (under 0.5 MB on the wire, 512 MiB to 1 GiB
// unpacked) against every command that fetches, in-process and through the built binary, where
// the memory a bomb costs can be read from the process's own rusage.
import Foundation
import Testing
import WxReplay

@testable import WxCLI

#if canImport(Glibc)
    import Glibc
#endif

/// A command that fetches, the path its request goes to, and how it ends when that answer is a bomb.
struct FetchingCommand: Sendable, CustomStringConvertible {
    var name: String
    var path: String
    var arguments: [String]
    /// 1 with the limit's message when the answer is needed; 0 when it only refines (meta.json).
    var exitCode: Int32

    var description: String { name }

    static let all: [FetchingCommand] = [
        FetchingCommand(name: "ingest", path: "/v1/forecast", arguments: ["ingest"], exitCode: 1),
        FetchingCommand(
            name: "backfill", path: ReplayServer.singleRunsPath,
            arguments: ["backfill", "--location", "Field", "--days", "1", "--every", "24"], exitCode: 1),
        FetchingCommand(
            name: "observe backfill", path: "/v1/archive",
            arguments: ["observe", "backfill", "--location", "Field", "--from", "2026-01-01", "--to", "2026-01-02"],
            exitCode: 1),
        FetchingCommand(
            name: "geocoding", path: "/v1/search", arguments: ["locations", "add", "Somewhere"], exitCode: 1),
        // meta.json only refines a model's run times: backfill goes on without it.
        FetchingCommand(
            name: "meta.json during backfill", path: "/data",
            arguments: ["backfill", "--location", "Field", "--days", "1", "--every", "24"], exitCode: 0)
    ]
}

private func bombSandbox() async throws -> ReplaySandbox {
    let replay = try ReplaySandbox()
    let clock = Date(timeIntervalSince1970: 1_785_000_000)
    replay.box.now = clock
    replay.server.now = { clock }
    replay.box.environment["WXDB_SINGLE_RUNS_URL"] = replay.server.baseURL + ReplayServer.singleRunsPath
    let added = await replay.run(
        "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--timezone", "UTC", "--models",
        "icon_seamless")
    #expect(added.code == 0, "\(added.stderrText)")
    return replay
}

@Suite("Compression bombs against every fetching command", .serialized)
struct CompressionBombCommandTests {
    @Test(
        "a bomb stops at 64 MiB: a clear error, not fetched again, nothing stored from it",
        arguments: FetchingCommand.all, ["gzip", "br", "zstd"])
    func bombInProcess(command: FetchingCommand, encoding: String) async throws {
        let replay = try await bombSandbox()
        defer { replay.cleanup() }
        replay.server.enqueue(.bomb(encoding: encoding), times: 4, path: command.path)
        let runsBefore = try await replay.count("forecast_runs")
        let result = await replay.box.run(command.arguments)
        #expect(result.code == command.exitCode, "\(result.stderrText)")
        #expect(replay.server.requestCount(path: command.path) == 1, "an oversized answer is not fetched again")
        if command.exitCode == 1 {
            #expect(result.stderrText.contains("grew past 64 MiB"), "\(result.stderrText)")
            #expect(try await replay.count("forecast_runs") == runsBefore)
        }
    }
}

@Suite("Compression bombs through the binary")
struct CompressionBombBinaryTests {
    /// What a run of the binary left: its exit status, stderr and peak resident memory.
    struct Measured {
        var status: Int32
        var stderr: String
        var maxRSSMiB: Int
    }

    /// Forks the binary from a small Python process and writes the child's own peak RSS (KiB).
    /// posix_spawn from this test process would not do: glibc spawns with CLONE_VM, and Linux
    /// records the shared memory's high-water mark (the whole test runner's, hundreds of MB in a
    /// full run) as the child's when it execs.
    static let measuring = """
        import os, sys
        pid = os.fork()
        if pid == 0:
            os.execv(sys.argv[2], sys.argv[2:])
        _, status, usage = os.wait4(pid, 0)
        open(sys.argv[1], "w").write(str(usage.ru_maxrss))
        sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
        """

    /// Runs the built binary with `environment` and reads its own peak RSS (not the whole test
    /// process's children, which other tests' subprocesses would mix in).
    static func run(_ arguments: [String], environment: [String: String], folder: URL) throws -> Measured {
        let binary = try #require(LocalSafetyBinaryTests.binary)
        let python = try #require(
            ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
                ?? ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/python3" }
                .first { FileManager.default.isExecutableFile(atPath: $0) },
            "python3 measures the binary's peak memory")
        let rssPath = folder.appendingPathComponent("rss-\(UUID().uuidString)").path
        let errPath = folder.appendingPathComponent("stderr-\(UUID().uuidString)").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([python, "-c", Self.measuring, rssPath, binary] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, python, &actions, nil, argv, envp)
        try #require(spawned == 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        // ru_maxrss is in KiB on Linux.
        let kib = try #require(Int((try? String(contentsOfFile: rssPath, encoding: .utf8)) ?? ""), "\(stderr)")
        return Measured(status: (status >> 8) & 0xFF, stderr: stderr, maxRSSMiB: kib / 1024)
    }

    @Test(
        "ingest and backfill hold a bomb under 300 MB of memory (a 512 MiB gzip bomb took it all before)",
        arguments: ["ingest", "backfill"])
    func bombMemory(name: String) async throws {
        guard LocalSafetyBinaryTests.binary != nil else { return }
        let command = try #require(FetchingCommand.all.first { $0.name == name })
        let replay = try await bombSandbox()
        defer { replay.cleanup() }
        replay.server.enqueue(.bomb(encoding: "gzip"), times: 4, path: command.path)
        // The binary reads the real clock, so the server's meta.json must too; two days back, so a
        // run is past on any day (the bomb answers before the server looks at which run).
        replay.server.now = { Date() }
        let arguments = command.arguments.map { $0 == "1" ? "2" : $0 }
        let measured = try Self.run(
            ["--db", replay.box.db] + arguments, environment: replay.box.environment, folder: replay.box.folder)
        #expect(measured.status == 1, "\(measured.stderr)")
        #expect(measured.stderr.contains("grew past 64 MiB"), "\(measured.stderr)")
        #expect(measured.maxRSSMiB < 300, "peak memory \(measured.maxRSSMiB) MiB")
    }
}
