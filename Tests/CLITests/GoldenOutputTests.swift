import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay

@testable import WxCLI

// The golden outputs: the JSON and CSV that a fixed set of commands prints over a fixed history, recorded
// byte for byte in Fixtures/golden/. They pin what a user sees while the storage underneath is rebuilt
// (issue 29): any change of a number, a key, an order or a format shows up here as a failing case.
//
// The history is built only through the CLI (locations add, backfill and ingest from the replay server's
// synthetic model runs and reanalysis, observe import of a station CSV, prune), with wxdb's clock and the
// server's pinned to one instant, so nothing depends on today's date or on Store internals.
//
// To re-record after a change that is meant to change the output (then review the diff of Fixtures/golden):
//     Scripts/record-golden
// which runs this suite with WXDB_GOLDEN_RECORD=1: the cases write their files instead of comparing,
// and the folder is emptied first so a case removed from the table leaves no stale file.

/// The instant wxdb and the replay server both take as now: 2026-07-25T17:20:00Z.
private let goldenNow: Int64 = 1_785_000_000

/// What a case runs and how its golden file is named.
private struct GoldenCase: Sendable {
    let name: String
    let arguments: [String]
}

private let location = ["--location", "Testville"]

/// The commands run over the full history, before any prune.
private let beforePrune: [GoldenCase] = {
    var cases: [GoldenCase] = []
    for by in ["lead", "day", "model"] {
        for units in ["metric", "imperial"] {
            for format in ["json", "csv"] {
                cases.append(
                    GoldenCase(
                        name: "verify-by-\(by)-\(units).\(format)",
                        arguments: ["query", "verify"] + location + ["--by", by, "--units", units, "--format", format]))
            }
        }
    }
    cases += [
        GoldenCase(
            name: "verify-source-era5.json",
            arguments: ["query", "verify"] + location + ["--source", "era5", "--format", "json"]),
        GoldenCase(
            name: "verify-precipitation.json",
            arguments: ["query", "verify"] + location + ["--var", "precipitation", "--format", "json"]),
        GoldenCase(
            name: "verify-precipitation-threshold.csv",
            arguments: ["query", "verify"] + location + [
                "--var", "precipitation", "--threshold", "0.5", "--by", "model", "--format", "csv"
            ]),
        GoldenCase(
            name: "verify-lead-range-from-to.json",
            arguments: ["query", "verify"] + location + [
                "--lead-from", "24", "--lead-to", "96", "--from", "2026-07-20", "--to", "2026-07-23T15:00",
                "--model", "icon_seamless", "--format", "json"
            ]),
        GoldenCase(
            name: "verify-wind-direction.json",
            arguments: ["query", "verify"] + location + [
                "--var", "wind_direction_10m", "--source", "era5", "--confidence", "0", "--format", "json"
            ])
    ]
    for by in ["hour", "day"] {
        for format in ["json", "csv"] {
            cases.append(
                GoldenCase(
                    name: "trend-by-\(by).\(format)",
                    arguments: ["query", "trend"] + location + ["--lead", "24", "--by", by, "--format", format]))
        }
    }
    cases += [
        GoldenCase(
            name: "trend-one-model-imperial.json",
            arguments: ["query", "trend"] + location + [
                "--lead", "48", "--model", "ecmwf_ifs025", "--units", "imperial", "--format", "json"
            ]),
        GoldenCase(
            name: "trend-precipitation-by-day.csv",
            arguments: ["query", "trend"] + location + [
                "--lead", "24", "--var", "precipitation", "--by", "day", "--format", "csv"
            ])
    ]
    for format in ["json", "csv"] {
        cases += [
            GoldenCase(
                name: "forecast.\(format)",
                arguments: ["query", "forecast"] + location + ["--at", "2026-07-24T12:00Z", "--format", format]),
            GoldenCase(name: "runs.\(format)", arguments: ["query", "runs"] + location + ["--format", format]),
            GoldenCase(
                name: "compare-by-lead.\(format)",
                arguments: ["query", "compare"] + location + ["--by", "lead", "--format", format]),
            GoldenCase(
                name: "consistency-by-all.\(format)",
                arguments: ["query", "consistency"] + location + ["--by", "all", "--format", format])
        ]
    }
    cases += [
        GoldenCase(
            name: "forecast-imperial-model.json",
            arguments: ["query", "forecast"] + location + [
                "--at", "2026-07-26T06:00Z", "--var", "wind_speed_10m", "--model", "icon_seamless",
                "--units", "imperial", "--format", "json"
            ]),
        GoldenCase(
            name: "compare-by-day.json",
            arguments: ["query", "compare"] + location + ["--by", "day", "--format", "json"]),
        GoldenCase(
            name: "compare-hln-imperial.csv",
            arguments: ["query", "compare"] + location + [
                "--method", "hln", "--units", "imperial", "--source", "era5", "--format", "csv"
            ]),
        GoldenCase(
            name: "consistency-by-day.json",
            arguments: ["query", "consistency"] + location + ["--by", "day", "--format", "json"]),
        GoldenCase(
            name: "consistency-imperial.csv",
            arguments: ["query", "consistency"] + location + [
                "--lead-from", "12", "--lead-to", "72", "--units", "imperial", "--format", "csv"
            ]),
        GoldenCase(
            name: "export-hourly.csv",
            arguments: ["export", "hourly"] + location + ["--from", "2026-07-22T00:00Z", "--to", "2026-07-22T11:00Z"]),
        GoldenCase(
            name: "export-hourly-vars-model.csv",
            arguments: [
                "export", "hourly", "--var", "temperature_2m,precipitation", "--model", "ecmwf_ifs025", "--from",
                "2026-07-23", "--to", "2026-07-23"
            ]),
        GoldenCase(name: "export-daily.csv", arguments: ["export", "daily"] + location),
        GoldenCase(name: "export-observations.csv", arguments: ["export", "observations"] + location),
        GoldenCase(
            name: "export-observations-station.csv",
            arguments: ["export", "observations", "--source", "station", "--var", "temperature_2m,precipitation"]),
        GoldenCase(
            name: "export-pairs.csv",
            arguments: ["export", "pairs"] + location + ["--from", "2026-07-21T00:00Z", "--to", "2026-07-21T11:00Z"]),
        GoldenCase(
            name: "export-pairs-era5-precipitation.csv",
            arguments: ["export", "pairs"] + location + [
                "--source", "era5", "--var", "precipitation", "--from", "2026-07-24", "--to", "2026-07-24"
            ]),
        GoldenCase(
            name: "export-pairs-verif.txt",
            arguments: ["export", "pairs"] + location + [
                "--format", "verif", "--model", "icon_seamless", "--from", "2026-07-23"
            ]),
        GoldenCase(name: "locations-list.json", arguments: ["locations", "list", "--format", "json"]),
        GoldenCase(name: "locations-show.csv", arguments: ["locations", "show", "Testville", "--format", "csv"]),
        GoldenCase(name: "stats.json", arguments: ["stats", "--format", "json"]),
        GoldenCase(name: "doctor-deep.json", arguments: ["doctor", "--deep", "--format", "json"])
    ]
    return cases
}()

/// The commands run again after `prune --keep-days 5`: answers from the kept sums, pruned runs marked.
private let afterPrune: [GoldenCase] = [
    GoldenCase(
        name: "pruned-verify-by-lead.json",
        arguments: ["query", "verify"] + location + ["--by", "lead", "--format", "json"]),
    GoldenCase(
        name: "pruned-verify-by-model.csv",
        arguments: ["query", "verify"] + location + ["--by", "model", "--format", "csv"]),
    GoldenCase(
        name: "pruned-verify-precipitation-threshold.json",
        arguments: ["query", "verify"] + location + ["--var", "precipitation", "--threshold", "1", "--format", "json"]
    ),
    GoldenCase(name: "pruned-runs.json", arguments: ["query", "runs"] + location + ["--format", "json"]),
    GoldenCase(
        name: "pruned-forecast.json",
        arguments: ["query", "forecast"] + location + ["--at", "2026-07-24T12:00Z", "--format", "json"]),
    GoldenCase(
        name: "pruned-trend.json", arguments: ["query", "trend"] + location + ["--lead", "24", "--format", "json"]),
    GoldenCase(
        name: "pruned-export-pairs.csv",
        arguments: ["export", "pairs"] + location + ["--from", "2026-07-22T00:00Z", "--to", "2026-07-23T23:00Z"]),
    GoldenCase(name: "pruned-stats.json", arguments: ["stats", "--format", "json"]),
    GoldenCase(name: "pruned-doctor-deep.json", arguments: ["doctor", "--deep", "--format", "json"])
]

/// A station CSV of `hours` hours from `first`: temperature and precipitation from fixed formulas
/// (a daily cycle and showers every few hours), in the shape `observe import` reads.
private func stationCSV(from first: Int64, hours: Int) -> String {
    var text = "time,temperature_2m,precipitation\n"
    for i in 0..<hours {
        let t = first + Int64(i) * 3600
        let hour = Double(t / 3600 % 24)
        let temperature = (170 + 60 * sin(2 * Double.pi * (hour - 9) / 24) + Double(i % 7) - 3).rounded() / 10
        let rain = i % 11 < 3 ? Double(i % 5) * 0.4 : 0
        text += CivilTime.isoUTC(t) + "," + JSON.numberText(temperature) + "," + JSON.numberText(rain) + "\n"
    }
    return text
}

/// The output with what differs between two runs of the same commands masked: the sandbox's folder (new
/// every run) and the database file's size in `stats` and `doctor` (it depends on when SQLite happened to
/// checkpoint the WAL, which differs run to run by a few pages). Everything else is as printed.
private func masked(_ output: String, folder: String) -> String {
    output.replacing(folder, with: "<sandbox>")
        .replacing(/"bytes":[0-9]+/, with: "\"bytes\":\"<size>\"")
        .replacing(/wxdb\.sqlite \([0-9.]+ [KMG]?i?B\)/, with: "wxdb.sqlite (<size>)")
}

/// What of a case's output both engines must print alike: all of it, except in `stats` and `doctor`,
/// which also report the engine's own facts (its file or server, size, schema name, file checks):
/// of those, the counts, the locations' activity and the verification sums' checks.
private func engineNeutral(_ name: String, _ output: Data) -> Data {
    guard name.hasSuffix("stats.json") || name.hasSuffix("doctor-deep.json"),
        var object = (try? JSONSerialization.jsonObject(with: output)) as? [String: Any]
    else { return output }
    if name.hasSuffix("stats.json") {
        object = object.filter { ["tables", "counted_from_runs", "gap_window_days", "locations"].contains($0.key) }
    } else {
        let checks = (object["checks"] as? [[String: Any]] ?? []).filter {
            ["verification sums", "verify by day"].contains($0["check"] as? String ?? "")
        }
        object = ["ok": object["ok"] ?? false, "checks": checks]
    }
    return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? output
}

private var goldenFolder: URL { packageRoot.appendingPathComponent("Fixtures/golden") }
private var recording: Bool { ProcessInfo.processInfo.environment["WXDB_GOLDEN_RECORD"] == "1" }

@Suite("Golden outputs: the JSON and CSV of a fixed set of commands over a fixed history, byte for byte", .serialized)
struct GoldenOutputTests {
    /// Runs the case and compares its stdout with the golden file (or writes it when recording).
    private func check(_ golden: GoldenCase, _ replay: ReplaySandbox, engine: StoreEngine) async throws {
        let result = await replay.box.run(golden.arguments)
        #expect(result.code == 0, "\(golden.name): exit \(result.code): \(result.stderrText)")
        let output = masked(result.stdout, folder: replay.box.folder.path)
        let file = goldenFolder.appendingPathComponent(golden.name)
        if recording && engine == .sqlite {
            try Data(output.utf8).write(to: file)
            return
        }
        guard let recorded = FileManager.default.contents(atPath: file.path) else {
            Issue.record("\(golden.name): no golden file at \(file.path); record with Scripts/record-golden")
            return
        }
        var actual = Data(output.utf8)
        var expected = recorded
        if engine == .postgres {
            actual = engineNeutral(golden.name, actual)
            expected = engineNeutral(golden.name, expected)
        }
        if actual != expected {
            let output = String(decoding: actual, as: UTF8.self)
            let old = String(decoding: expected, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let new = output.split(separator: "\n", omittingEmptySubsequences: false)
            let line = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
            var was = line < old.count ? String(old[line]) : "(end of file)"
            var now = line < new.count ? String(new[line]) : "(end of output)"
            // Long lines (JSON): from a little before where they part.
            let same = zip(was, now).prefix { $0 == $1 }.count
            if same > 200 {
                was = "…" + String(was.dropFirst(same - 100))
                now = "…" + String(now.dropFirst(same - 100))
            }
            Issue.record(
                "\(golden.name) differs from Fixtures/golden at line \(line + 1):\n  golden: \(was.prefix(400))\n  now:    \(now.prefix(400))"
            )
        }
    }

    @Test("every command prints exactly the recorded bytes, before and after a prune")
    func goldenOutputs() async throws { try await goldenOutputs(on: .sqlite) }

    @Test(
        "on PostgreSQL, the same history built through the same commands prints the same bytes (issue 30 §6)",
        .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
    func goldenOutputsOnPostgres() async throws {
        #expect(!recording, "golden files are recorded on SQLite only")
        try await goldenOutputs(on: .postgres)
    }

    /// `check` on either engine: every case, the verify ones included, prints the same bytes on
    /// PostgreSQL (its writes fold the kept sums in SQLite's order, so the sums keep the same bits).
    private func compare(_ golden: GoldenCase, _ replay: ReplaySandbox, engine: StoreEngine) async throws {
        try await check(golden, replay, engine: engine)
    }

    /// Builds the history on `engine` through the CLI and compares every case's output.
    private func goldenOutputs(on engine: StoreEngine) async throws {
        let replay = try ReplaySandbox()
        if engine == .postgres { replay.box.environment["WXDB_DB"] = try engine.freshDatabase("golden") }
        let clock = Date(timeIntervalSince1970: TimeInterval(goldenNow))
        replay.box.now = clock
        replay.server.now = { clock }
        replay.box.environment["WXDB_SINGLE_RUNS_URL"] = replay.server.baseURL + ReplayServer.singleRunsPath

        if recording && engine == .sqlite {
            try? FileManager.default.removeItem(at: goldenFolder)
            try FileManager.default.createDirectory(at: goldenFolder, withIntermediateDirectories: true)
        }

        let setup: [[String]] = [
            [
                "locations", "add", "Testville", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin",
                "--models", "icon_seamless,ecmwf_ifs025"
            ],
            // Two runs a day per model for twelve days, and era5 observations over them.
            ["backfill", "--location", "Testville", "--days", "12", "--every", "12", "--format", "json"],
            // Today's live runs: the `current` and `analysis:*` observations.
            ["ingest", "--location", "Testville"]
        ]
        for arguments in setup {
            let result = await replay.box.run(arguments)
            try #require(result.code == 0, "\(arguments.joined(separator: " ")): \(result.stderrText)")
        }
        let csv = try replay.box.write(
            "station.csv", stationCSV(from: goldenNow / 3600 * 3600 - 14 * 86400, hours: 14 * 24))
        let imported = await replay.box.run(["observe", "import", csv, "--source", "station"] + location)
        try #require(imported.code == 0, "observe import: \(imported.stderrText)")

        for golden in beforePrune { try await compare(golden, replay, engine: engine) }

        let prune = await replay.box.run(["prune", "--keep-days", "5"])
        try #require(prune.code == 0, "prune: \(prune.stderrText)")
        for golden in afterPrune { try await compare(golden, replay, engine: engine) }

        // A file left over from a case that is gone would pin nothing: the folder holds the cases only.
        let names = Set((beforePrune + afterPrune).map(\.name))
        #expect(names.count == beforePrune.count + afterPrune.count, "two cases share a golden file name")
        let files = Set((try? FileManager.default.contentsOfDirectory(atPath: goldenFolder.path)) ?? [])
        #expect(
            files == names,
            "Fixtures/golden has files no case writes, or lacks some: \(files.symmetricDifference(names))")
    }
}
