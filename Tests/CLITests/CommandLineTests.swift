import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay
import WxSQLite

@testable import WxCLI

/// Every command path in the tree, with its command.
private func allCommands(_ command: Command = WXDB.root, _ path: [String] = []) -> [([String], Command)] {
    [(path, command)] + command.subcommands.flatMap { allCommands($0, path + [$0.name]) }
}

/// The `--names` listed under OPTIONS in a help text.
private func helpOptions(_ help: String) -> Set<String> {
    guard let start = help.range(of: "\nOPTIONS:\n") else { return [] }
    let section = help[start.upperBound...].prefix { _ in true }
    var names: Set<String> = []
    for line in section.split(separator: "\n") {
        guard line.hasPrefix("  ") else { break }
        guard !line.hasPrefix("   ") else { continue }  // a help text on its own line
        let label = line.dropFirst(2).components(separatedBy: "  ")[0]
        for word in label.split(separator: " ") where word.hasPrefix("--") {
            names.insert(String(word.dropFirst(2)).trimmingCharacters(in: CharacterSet(charactersIn: ",")))
        }
    }
    return names
}

@Suite("wxdb help: generated from each command's option table")
struct HelpTests {
    @Test("every command's help shows exactly the options it accepts")
    func helpMatchesTable() async throws {
        let everyOption = Set(allCommands().flatMap { $0.1.options.map(\.name) })
        for (path, command) in allCommands() {
            let result = await Sandbox().run(path + ["--help"])
            #expect(result.code == 0, "\(path)")
            var expected = Set(command.isGroup ? [] : command.options.map(\.name) + verbosityOptions.map(\.name))
            expected.insert("help")
            // The top-level help lists the options every command takes (issue 27: it listed none).
            if path.isEmpty { expected.formUnion(["version", "db"] + verbosityOptions.map(\.name)) }
            #expect(helpOptions(result.stdout) == expected, "\(path): help and option table differ")
            guard !command.isGroup else { continue }
            // Every option help shows is one the parser takes for this command.
            let positionals = command.arguments.filter { !$0.optional }.map { _ in "x" }
            for option in command.options + verbosityOptions {
                let words = path + positionals + ["--\(option.name)"] + (option.valueName == nil ? [] : ["x"])
                do {
                    _ = try ArgumentParser(root: WXDB.root).parse(words)
                } catch let error as UsageError {
                    Issue.record("\(words.joined(separator: " ")): \(error.message)")
                }
            }
            // An option of another command is refused here, as a usage error naming this command.
            for name in everyOption.subtracting(expected).sorted().prefix(3) {
                let refused = await Sandbox().run(path + ["--\(name)", "x"])
                #expect(refused.code == 64, "\(path) --\(name)")
            }
        }
    }

    @Test(
        "'wxdb <group> help <sub>' is 'wxdb help <group> <sub>'",
        arguments: [["query", "runs"], ["locations", "set"], ["observe", "backfill"], ["export", "pairs"]])
    func groupHelp(_ path: [String]) async {
        let a = await Sandbox().run([path[0], "help", path[1]])
        let b = await Sandbox().run(["help"] + path)
        #expect(a.code == 0)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout.contains("USAGE: wxdb \(path.joined(separator: " "))"))
    }

    @Test(
        "USAGE lines show required options",
        arguments: [
            (["observe", "backfill"], "wxdb observe backfill --location <name> --from <date> --to <date> [<options>]"),
            (["import"], "wxdb import <file> ... --location <name> --fetched-at <time> [<options>]"),
            (["prune"], "wxdb prune --keep-days <n> [<options>]"),
            (["query", "trend"], "wxdb query trend --location <name> --lead <hours> [<options>]"),
            (["query", "forecast"], "wxdb query forecast --location <name> --at <time> [<options>]")
        ])
    func usageShowsRequired(_ path: [String], _ usage: String) async {
        #expect(await Sandbox().run(path + ["--help"]).stdout.contains("USAGE: \(usage)\n"))
    }

    @Test("the locations overview lists set; --from/--to say what they filter on")
    func wording() async {
        #expect(await Sandbox().run("locations", "--help").stdout.contains("  set "))
        #expect(await Sandbox().run("export", "hourly", "--help").stdout.contains("Only runs issued at or after"))
        #expect(
            await Sandbox().run("export", "pairs", "--help").stdout.contains("Only forecast hours valid at or after"))
        #expect(await Sandbox().run("query", "verify", "--help").stdout.contains("Only forecast hours valid"))
        #expect(await Sandbox().run("query", "runs", "--help").stdout.contains("Only runs issued"))
    }

    @Test("commands that do not talk to Open-Meteo do not offer --api-key")
    func apiKeyOnlyWhereUsed() async {
        #expect(!(await Sandbox().run("doctor", "--help").stdout.contains("--api-key")))
        #expect(await Sandbox().run("ingest", "--help").stdout.contains("--api-key"))
        let result = await Sandbox().run("doctor", "--api-key", "k")
        #expect(result.code == 64)
        #expect(result.stderr.first == "Error: 'wxdb doctor' does not take --api-key")
    }
}

@Suite("wxdb: mistakes get a 'did you mean'")
struct DidYouMeanTests {
    @Test(
        "mistyped commands, subcommands, options, variables and location names",
        arguments: [
            (["qeury"], "did you mean 'query'?"),
            (["query", "run", "--location", "Berlin"], "did you mean 'runs'?"),
            (["query", "verify", "--locaton", "Berlin"], "did you mean '--location'?"),
            (["query", "verify", "--location", "Berlin", "--var", "temperature"], "did you mean 'temperature_2m'?"),
            (["export", "pairs", "--var", "precipitaton"], "did you mean 'precipitation'?"),
            (["query", "verify", "--location", "Berlin", "--by", "modle"], "did you mean 'model'?")
        ])
    func usage(_ arguments: [String], _ hint: String) async throws {
        let box = Sandbox()
        _ = try HistoryBuilder(db: box.db, name: "Berlin")
        let result = await box.run(arguments)
        #expect(result.code == 64)
        #expect(result.stderr.first?.hasPrefix("Error: ") == true)
        #expect(result.stderrText.contains(hint), "\(result.stderrText)")
    }

    /// Issue 27: a name in another case is the one saved location it can mean; a typo gets a hint.
    @Test("a location name in the wrong case is taken, a misspelt one gets a did-you-mean")
    func locationName() async throws {
        let box = Sandbox()
        _ = try HistoryBuilder(db: box.db, name: "Berlin")
        for arguments in [["locations", "show", "berlln"], ["query", "runs", "--location", "Berln"]] {
            let result = await box.run(arguments)
            #expect(result.code == 1)
            #expect(result.stderrText.contains("no location named"), "\(arguments)")
            #expect(result.stderrText.contains("did you mean \"Berlin\"?"), "\(arguments)")
        }
        for name in ["berlin", "BERLIN"] {
            let result = await box.run("locations", "show", name)
            #expect(result.code == 0, "\(name): \(result.stderrText)")
            #expect(result.stdout.hasPrefix("name:         Berlin\n"))
        }
    }
}

private let exitCases: [([String], Int32)] = [
    (["observe", "backfill", "--location", "Here", "--from", "2026-02-01", "--to", "2026-01-01"], 64),
    (["query", "verify", "--location", "Here", "--from", "2026-02-01", "--to", "2026-01-01"], 64),
    (["export", "pairs", "--location", "Here", "--from", "2026-02-01", "--to", "2026-01-01"], 64),
    (["query", "verify", "--location", "Here", "--var", "snow"], 64),
    (["export", "hourly", "--var", "snow"], 64),
    (["query", "runs", "--location", "Here"], 1),
    (["export", "hourly", "--location", "Here"], 1),
    (["export", "pairs", "--location", "Here"], 1)
]

@Suite("wxdb: one rule for options and exit codes")
struct OptionRuleTests {
    @Test("--quiet with --verbose is a usage error")
    func quietVerbose() async {
        let result = await Sandbox().run("--quiet", "locations", "list", "--verbose")
        #expect(result.code == 64)
        #expect(result.stderrText.contains("--quiet and --verbose"))
    }

    @Test("lists: a comma list and repeated options are the same")
    func lists() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        // An Adelaide response for a place at 1°N 2°E: --force past the 50 km check.
        let imported = await box.run(
            "import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"), "--location", "Here",
            "--fetched-at", "2026-07-27T21:00Z", "--force")
        #expect(imported.code == 0, "\(imported.stderrText)")
        let comma = await box.run("export", "hourly", "--var", "temperature_2m,precipitation")
        let repeated = await box.run("export", "hourly", "--var", "temperature_2m", "--var", "precipitation")
        #expect(comma.code == 0, "\(comma.stderrText)")
        #expect(comma.stdout == repeated.stdout)
        #expect(
            comma.stdout.hasPrefix(
                "location,model,issued_at,fetched_at,valid_time,lead_hours,temperature_2m,precipitation\r\n"))
        #expect(
            await box.run("locations", "set", "Here", "--models", "icon_seamless", "--models", "gfs_seamless").code == 0
        )
        #expect(await box.run("locations", "show", "Here").stdout.contains("icon_seamless, gfs_seamless"))
    }

    @Test("the same mistake exits the same way in every command", arguments: exitCases)
    func exitCodes(_ arguments: [String], _ code: Int32) async throws {
        let box = Sandbox()
        _ = try HistoryBuilder(db: box.db, name: "Here")
        let result = await box.run(arguments)
        #expect(result.code == code, "\(arguments): \(result.stderrText)")
        #expect(result.stderr.first?.hasPrefix("Error: ") == true)
        #expect(result.stdout.isEmpty)
    }

    @Test("an export that matches nothing fails like a query, and leaves no file")
    func emptyExport() async throws {
        let box = Sandbox()
        _ = try HistoryBuilder(db: box.db, name: "Here")
        let output = box.folder.appendingPathComponent("out.csv").path
        let result = await box.run("export", "hourly", "--output", output)
        #expect(result.code == 1)
        #expect(result.stderrText.contains("nothing to export"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("commands that only read never create a database; a missing folder is not made")
    func neverCreate() async throws {
        let box = Sandbox()
        for arguments in [
            ["locations", "list"], ["stats"], ["query", "runs", "--location", "X"], ["export", "hourly"], ["doctor"]
        ] {
            let result = await box.run(arguments)
            #expect(result.code == 1, "\(arguments)")
            #expect(!FileManager.default.fileExists(atPath: box.db), "\(arguments) created the database")
        }
        let folder = box.folder.appendingPathComponent("no-such-folder").path
        let added = await box.run("--db", folder + "/x.sqlite", "locations", "add", "Here", "--lat", "1", "--lon", "2")
        #expect(added.code == 1)
        #expect(added.stderrText.contains("does not exist"))
        #expect(!FileManager.default.fileExists(atPath: folder))
        // A name the geocoder cannot reach leaves no database behind either.
        let looked = await box.run("locations", "add", "Berlin")
        #expect(looked.code == 1)
        #expect(!FileManager.default.fileExists(atPath: box.db))
    }

    @Test("doctor --format json")
    func doctorJSON() async throws {
        let box = Sandbox()
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        let result = await box.run("doctor", "--format", "json")
        #expect(result.code == 0)
        let doc = try parseJSON(result.stdout)
        #expect(doc["ok"]?.boolValue == true)
        #expect(
            doc["checks"]?.arrayValue?.contains {
                $0["check"]?.stringValue == "integrity" && $0["result"]?.stringValue == "ok"
            } == true)
    }

    @Test("locations add --format json prints the added location")
    func addJSON() async throws {
        let box = Sandbox()
        let result = await box.run(
            "locations", "add", "Here", "--lat", "1.5", "--lon", "2", "--models", "icon_seamless,gfs_seamless",
            "--format", "json")
        #expect(result.code == 0)
        let doc = try parseJSON(result.stdout)
        #expect(doc["name"]?.stringValue == "Here")
        #expect(doc["latitude"]?.numberValue == 1.5)
        #expect(doc["models"]?.arrayValue?.count == 2)
    }

    @Test("before the first forecast hour has passed, verify and trend say when it will")
    func firstHour() async throws {
        let box = Sandbox()
        let history = try HistoryBuilder(db: box.db, name: "Here")
        let now = Int64(box.now.timeIntervalSince1970)
        let hour = now / 3600 * 3600
        let times = (-3..<6).map { hour + Int64($0) * 3600 }
        try history.storeRun(
            issuedAt: now - 600, fetchedAt: now - 600, times: times, columns: ["temperature_2m": times.map { _ in 5 }])
        for arguments in [
            ["query", "verify", "--location", "Here"], ["query", "trend", "--location", "Here", "--lead", "1"]
        ] {
            let result = await box.run(arguments)
            #expect(result.code == 1)
            #expect(result.stderrText.contains("no forecast hour of Here has passed yet"), "\(result.stderrText)")
            #expect(result.stderrText.contains("\(CivilTime.isoUTC(hour + 3600)), passes in"))
            #expect(!result.stderrText.contains("observe backfill"))
        }
    }
}

@Suite("wxdb schedule: the API key is never printed")
struct ScheduleKeyTests {
    @Test(
        "with WXDB_API_KEY set, the text has no key and a note says how to give it safely",
        arguments: ["--cron", "--systemd"])
    func keyNote(_ kind: String) async {
        let box = Sandbox()
        box.environment["WXDB_API_KEY"] = "secret-key-123"
        let result = await box.run("schedule", kind)
        #expect(result.code == 0)
        #expect(!result.stdout.contains("secret-key-123"))
        #expect(!result.stderrText.contains("secret-key-123"))
        #expect(result.stderrText.contains("the key is not in this text"))
        #expect(result.stderrText.contains(kind == "--cron" ? "~/.config/wxdb/api-key" : "EnvironmentFile="))
        #expect(result.stderrText.contains("umask 077"))
        if kind == "--systemd" { #expect(result.stderrText.contains("loginctl enable-linger")) }
    }
}

@Suite("wxdb: data people browse, and the offline tour")
struct BrowsingTests {
    @Test("the views carry ISO 8601 UTC text beside each integer instant")
    func viewTimes() async throws {
        let box = Sandbox()
        _ = try GeneratedHistory.build(box)
        let db = try SQLiteBackdoor(box.db).db
        let row = try #require(
            try db.firstRow(
                "SELECT valid_time, valid_time_utc, issued_at_utc FROM forecast_observation_pairs ORDER BY valid_time LIMIT 1"
            ) {
                (time: $0.int64(0), text: $0.string(1), issued: $0.string(2))
            })
        #expect(row.text == CivilTime.isoUTC(row.time))
        #expect(row.issued.hasSuffix("Z"))
        let fetched = try db.scalarText("SELECT fetched_at_utc FROM hourly_forecasts_with_lead LIMIT 1")
        #expect(fetched?.hasSuffix("Z") == true)
    }

    @Test("the replay server geocodes every name the README adds by name")
    func readmeNames() async throws {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let names = readme.split(separator: "\n").compactMap { whole -> String? in
            let line = whole.components(separatedBy: " #")[0]
            guard let range = line.range(of: "wxdb locations add "), !line.contains("--lat") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        #expect(!names.isEmpty)
        let replay = try ReplaySandbox()
        for name in Set(names) where !name.hasPrefix("NAME") {
            let result = await replay.run("locations", "add", name, "--format", "json")
            #expect(result.code == 0, "\(name): \(result.stderrText)")
        }
    }

    @Test("shell completion comes from the same tables", arguments: ["bash", "zsh", "fish"])
    func completion(_ shell: String) async throws {
        let result = await Sandbox().run("completion", shell)
        #expect(result.code == 0)
        #expect(result.stdout.contains("verify"))
        #expect(result.stdout.contains("temperature_2m"))
        #expect(result.stdout.contains("import-home-assistant") && result.stdout.contains("sensor"))
        guard shell == "bash", FileManager.default.isExecutableFile(atPath: "/bin/bash") else { return }
        let script = URL(fileURLWithPath: Scratch.path("completion", suffix: ".bash"))
        defer { try? FileManager.default.removeItem(at: script) }
        try result.stdout.write(to: script, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "source '\(script.path)' && complete -p wxdb"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(output.contains("complete -F _wxdb wxdb"))
    }
}
