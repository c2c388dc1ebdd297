// The fast subset of wxdb's reliability suite (issue #7): hostile responses and station CSVs
// in-process, hostile names and paths through the CLI, and a scan of Sources/ for SQL built by
// interpolation. `Scripts/reliability` runs the full suite against the release binary; it runs the
// mutation tests below with WXDB_RELIABILITY_MUTATIONS=10000 and reads their figures from
// WXDB_RELIABILITY_REPORT.
import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite

@testable import WxCLI
@testable import WxStore
@testable import WxStoreSQLite

// MARK: - Deterministic randomness

/// SplitMix64: small, fast and reproducible from a seed, so a failure can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// How many mutations a test runs: the environment's figure in the full suite, else `quick`.
func mutationCount(quick: Int) -> Int {
    ProcessInfo.processInfo.environment["WXDB_RELIABILITY_MUTATIONS"].flatMap(Int.init) ?? quick
}

/// Appends one line of figures to the file the reliability script reads, when it asked for them.
func reportFigures(_ line: String) {
    guard let path = ProcessInfo.processInfo.environment["WXDB_RELIABILITY_REPORT"] else { return }
    if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    guard let handle = FileHandle(forWritingAtPath: path) else { return }
    handle.seekToEndOfFile()
    handle.write(Data((line + "\n").utf8))
    handle.closeFile()
}

/// What a batch of mutations did.
struct MutationFigures: CustomStringConvertible {
    var tried = 0
    var refused = 0
    var accepted = 0
    var failures: [String] = []
    var byKind: [String: (tried: Int, refused: Int)] = [:]
    var held: Int { tried - failures.count }

    mutating func count(_ kind: String, refused wasRefused: Bool) {
        tried += 1
        if wasRefused { refused += 1 } else { accepted += 1 }
        var entry = byKind[kind] ?? (0, 0)
        entry.tried += 1
        if wasRefused { entry.refused += 1 }
        byKind[kind] = entry
    }

    var description: String {
        let kinds = byKind.keys.sorted().map { "\($0)=\(byKind[$0]!.tried)/\(byKind[$0]!.refused)" }.joined(
            separator: " ")
        return "tried=\(tried) held=\(held) refused=\(refused) accepted=\(accepted) kinds(tried/refused): \(kinds)"
    }
}

// MARK: - Mutating Open-Meteo responses

enum PathStep: Hashable {
    case key(String)
    case index(Int)
}

/// Builds hostile variants of a valid response: byte-level damage (truncation, flipped bytes,
/// invalid UTF-8) and structural damage through the parsed tree (type swaps, nulls, huge, negative
/// and non-finite numbers, length mismatches, deep nesting, duplicate keys, repeated times, unknown
/// or converting units).
struct JSONMutator {
    static let kinds = [
        "truncate", "byteFlip", "typeSwap", "null", "huge", "negative", "nonFinite", "lengthMismatch",
        "deepNesting", "invalidUTF8", "duplicateKey", "duplicateTime", "unitSwap", "hugeWithUnit", "dropKey",
        "hugeString"
    ]
    static let token = "@@WXDB_RAW@@"

    let bytes: [UInt8]
    let json: JSON
    let paths: [[PathStep]]
    let numberPaths: [[PathStep]]
    let stringPaths: [[PathStep]]
    let objectPaths: [[PathStep]]
    let seriesPaths: [[PathStep]]
    let timePaths: [[PathStep]]
    let unitPaths: [[PathStep]]

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        json = try JSONParser.parse(bytes)
        var all: [([PathStep], JSON)] = []
        Self.collect(json, [], &all)
        paths = all.map(\.0).filter { !$0.isEmpty }
        numberPaths = all.filter { if case .number = $0.1 { return true } else { return false } }.map(\.0)
        stringPaths = all.filter { if case .string = $0.1 { return true } else { return false } }.map(\.0)
        objectPaths = all.filter { if case .object = $0.1 { return true } else { return false } }.map(\.0)
        func under(_ path: [PathStep], _ sections: Set<String>) -> Bool {
            guard path.count == 2, case .key(let s) = path[0] else { return false }
            return sections.contains(s)
        }
        seriesPaths = all.filter {
            if case .array = $0.1 { return under($0.0, ["hourly", "daily"]) } else { return false }
        }.map(\.0)
        timePaths = seriesPaths.filter { $0.last == .key("time") }
        unitPaths = all.filter { path, value in
            guard path.count == 2, case .key(let s) = path[0], s.hasSuffix("_units") else { return false }
            return value.stringValue != nil
        }.map(\.0)
    }

    static func collect(_ json: JSON, _ prefix: [PathStep], _ out: inout [([PathStep], JSON)]) {
        out.append((prefix, json))
        switch json {
        case .object(let o): for (k, v) in zip(o.keys, o.values) { collect(v, prefix + [.key(k)], &out) }
        case .array(let a): for (i, v) in a.enumerated() { collect(v, prefix + [.index(i)], &out) }
        default: break
        }
    }

    /// The tree with the value at `path` replaced by `change` of it (removed when it returns nil).
    static func replacing(_ json: JSON, at path: ArraySlice<PathStep>, _ change: (JSON) -> JSON?) -> JSON? {
        guard let step = path.first else { return change(json) }
        switch (json, step) {
        case (.object(let o), .key(let k)):
            var pairs: [(String, JSON)] = []
            for (key, value) in zip(o.keys, o.values) {
                if key == k {
                    if let new = replacing(value, at: path.dropFirst(), change) { pairs.append((key, new)) }
                } else {
                    pairs.append((key, value))
                }
            }
            return JSON.object(pairs)
        case (.array(var a), .index(let i)) where i < a.count:
            if let new = replacing(a[i], at: path.dropFirst(), change) { a[i] = new } else { a.remove(at: i) }
            return .array(a)
        default:
            return json
        }
    }

    func serialize(_ tree: JSON?, raw: [UInt8]? = nil) -> [UInt8] {
        let text = Array((tree ?? .null).serialized().utf8)
        guard let raw else { return text }
        let needle = Array("\"\(Self.token)\"".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < text.count {
            if text[i] == needle[0], i + needle.count <= text.count, Array(text[i..<i + needle.count]) == needle {
                out += raw
                i += needle.count
            } else {
                out.append(text[i])
                i += 1
            }
        }
        return out
    }

    func with(_ path: [PathStep], _ change: (JSON) -> JSON?) -> JSON? { Self.replacing(json, at: path[...], change) }

    func pick<T>(_ list: [T], _ rng: inout SplitMix64) -> T? {
        list.isEmpty ? nil : list[Int(rng.next() % UInt64(list.count))]
    }

    /// One mutated document of `kind`.
    func mutate(_ kind: String, _ rng: inout SplitMix64) -> [UInt8] {
        let rawToken = JSON.string(Self.token)
        switch kind {
        case "truncate":
            return Array(bytes.prefix(Int(rng.next() % UInt64(max(1, bytes.count)))))
        case "byteFlip":
            var copy = bytes
            for _ in 0..<(1 + Int(rng.next() % 4)) where !copy.isEmpty {
                copy[Int(rng.next() % UInt64(copy.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
            return copy
        case "typeSwap":
            let replacements: [JSON] = [
                .string("12.5"), .bool(true), .array([]), .object(JSONObject()), .number(1),
                .string("2026-01-01T00:00"), .array([.null]), .string("")
            ]
            guard let path = pick(paths, &rng), let new = pick(replacements, &rng) else { return bytes }
            return serialize(with(path) { old in old.typeName == new.typeName ? .bool(false) : new })
        case "null":
            guard let path = pick(paths, &rng) else { return bytes }
            return serialize(with(path) { _ in .null })
        case "huge":
            let values: [Double] = [
                1e15, 1e100, -1e100, 1.7976931348623157e308, -1.7976931348623157e308, 9.3e18, 1e11,
                Double.leastNonzeroMagnitude
            ]
            guard let path = pick(numberPaths, &rng), let v = pick(values, &rng) else { return bytes }
            return serialize(with(path) { _ in .number(v) })
        case "negative":
            let values: [Double] = [-1, -0.0, -1e11, -9.3e18, -86400 * 365]
            guard let path = pick(numberPaths, &rng), let v = pick(values, &rng) else { return bytes }
            return serialize(with(path) { old in rng.next() % 2 == 0 ? .number(-(old.numberValue ?? 1)) : .number(v) })
        case "nonFinite":
            let tokens = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "nan", "inf", "1e309", "0x10"]
            guard let path = pick(numberPaths, &rng), let t = pick(tokens, &rng) else { return bytes }
            return serialize(with(path) { _ in rawToken }, raw: Array(t.utf8))
        case "lengthMismatch":
            guard let path = pick(seriesPaths, &rng) else { return bytes }
            let grow = rng.next() % 2 == 0
            return serialize(
                with(path) { old in
                    guard var a = old.arrayValue else { return old }
                    if grow || a.isEmpty { a.append(a.last ?? .number(0)) } else { a.removeLast() }
                    return .array(a)
                })
        case "deepNesting":
            let depth = [63, 64, 65, 100, 1000, 100_000][Int(rng.next() % 6)]
            let open = rng.next() % 2 == 0 ? "[" : "{\"a\":"
            let close = open == "[" ? "]" : "}"
            let balanced = rng.next() % 4 != 0
            let raw =
                String(repeating: open, count: depth) + "1" + (balanced ? String(repeating: close, count: depth) : "")
            guard let path = pick(paths, &rng) else { return Array(raw.utf8) }
            return serialize(with(path) { _ in rawToken }, raw: Array(raw.utf8))
        case "invalidUTF8":
            let bad: [[UInt8]] = [
                [0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE2, 0x82]
            ]
            guard let seq = pick(bad, &rng) else { return bytes }
            if let path = pick(stringPaths, &rng), rng.next() % 3 != 0 {
                return serialize(with(path) { _ in rawToken }, raw: [0x22, 0x61] + seq + [0x22])
            }
            var copy = bytes
            copy.insert(contentsOf: seq, at: Int(rng.next() % UInt64(copy.count + 1)))
            return copy
        case "duplicateKey":
            guard let path = pick(objectPaths, &rng), let object = (path.isEmpty ? json : value(at: path))?.objectValue,
                let key = pick(object.keys, &rng)
            else { return bytes }
            let value = rng.next() % 2 == 0 ? object[key]! : .number(42)
            let tree = Self.replacing(json, at: path[...]) { old in
                guard let o = old.objectValue else { return old }
                return JSON.object(Array(zip(o.keys, o.values)) + [(Self.token, .null)])
            }
            let text = String(decoding: serialize(tree), as: UTF8.self)
            let key2 = JSON.string(key).serialized()
            return Array(
                text.replacingOccurrences(of: "\"\(Self.token)\":null", with: key2 + ":" + value.serialized()).utf8)
        case "duplicateTime":
            guard let path = pick(timePaths, &rng) else { return bytes }
            return serialize(
                with(path) { old in
                    guard var a = old.arrayValue, a.count >= 2 else { return old }
                    let i = 1 + Int(rng.next() % UInt64(a.count - 1))
                    a[i] = a[Int(rng.next() % UInt64(i))]
                    return .array(a)
                })
        case "unitSwap":
            let units = ["°F", "inch", "m/s", "kn", "mph", "K", "bogus", "", "undefined", "°C"]
            guard let path = pick(unitPaths, &rng), let u = pick(units, &rng) else { return bytes }
            return serialize(with(path) { _ in .string(u) })
        case "hugeWithUnit":
            // A converting unit and a huge value: (1e308 − 32) × 5/9 overflows unless checked.
            let pairs: [(String, Double)] = [
                ("°F", 1.7976931348623157e308), ("°F", -1.7e308), ("m/s", 1e308), ("kn", 1.7e308), ("inch", 1e307)
            ]
            guard let path = pick(unitPaths, &rng), let (unit, v) = pick(pairs, &rng),
                case .key(let section) = path[0], case .key(let variable) = path[1]
            else { return bytes }
            let target = String(section.dropLast("_units".count))
            var tree = with(path) { _ in .string(unit) }
            tree = Self.replacing(tree ?? .null, at: [.key(target), .key(variable)][...]) { old in
                if let a = old.arrayValue, !a.isEmpty {
                    var b = a
                    b[Int(rng.next() % UInt64(b.count))] = .number(v)
                    return .array(b)
                }
                return old.numberValue != nil ? .number(v) : old
            }
            return serialize(tree)
        case "dropKey":
            guard let path = pick(paths, &rng) else { return bytes }
            return serialize(with(path) { _ in nil })
        case "hugeString":
            guard let path = pick(paths, &rng) else { return bytes }
            let s = String(repeating: "x", count: 200_000)
            return serialize(with(path) { _ in .string(s) })
        default:
            return bytes
        }
    }

    func value(at path: [PathStep]) -> JSON? {
        var current: JSON? = json
        for step in path {
            switch (current, step) {
            case (.object(let o)?, .key(let k)): current = o[k]
            case (.array(let a)?, .index(let i)) where i < a.count: current = a[i]
            default: return nil
            }
        }
        return current
    }
}

// MARK: - Database checks

let reliabilityTables = [
    "locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations"
]

func tableCounts(_ db: Database) throws -> [String: Int64] {
    var result: [String: Int64] = [:]
    for table in reliabilityTables { result[table] = try db.scalarInt("SELECT count(*) FROM \(table)") }
    return result
}

/// The invariants every committed state must keep; returns what is broken (empty when all hold).
func consistencyProblems(_ db: Database, runsAfter firstRun: Int64 = 0) throws -> [String] {
    var problems: [String] = []
    let hours =
        try db.scalarInt(
            """
            SELECT count(*) FROM forecast_runs r WHERE r.id > ?
            AND r.hour_count != (SELECT count(*) FROM hourly_forecasts h WHERE h.run_id = r.id)
            """, [.integer(firstRun)]) ?? -1
    if hours != 0 { problems.append("\(hours) runs whose hour_count differs from their hourly rows") }
    let days =
        try db.scalarInt(
            """
            SELECT count(*) FROM forecast_runs r WHERE r.id > ?
            AND r.day_count != (SELECT count(*) FROM daily_forecasts d WHERE d.run_id = r.id)
            """, [.integer(firstRun)]) ?? -1
    if days != 0 { problems.append("\(days) runs whose day_count differs from their daily rows") }
    let unlogged =
        try db.scalarInt(
            """
            SELECT count(*) FROM forecast_runs r WHERE r.id > ?
            AND NOT EXISTS (SELECT 1 FROM fetch_log f WHERE f.run_id = r.id AND f.outcome = 'stored')
            """, [.integer(firstRun)]) ?? -1
    if unlogged != 0 { problems.append("\(unlogged) runs without a 'stored' fetch_log row") }
    let infinite = { (table: String, key: String, columns: [String]) -> String in
        "SELECT count(*) FROM \(table) WHERE \(key) > ? AND ("
            + columns.map { "abs(\($0)) >= 9e999" }.joined(separator: " OR ") + ")"
    }
    for (table, key, columns) in [
        ("hourly_forecasts", "run_id", Variables.hourlyNames), ("daily_forecasts", "run_id", Variables.dailyNames),
        ("forecast_runs", "id", ["grid_latitude", "grid_longitude", "grid_elevation"])
    ] {
        let n = try db.scalarInt(infinite(table, key, columns), [.integer(firstRun)]) ?? -1
        if n != 0 { problems.append("\(n) rows of \(table) hold an infinite value") }
    }
    // Observations are upserted in place, so they are checked whole (cheap enough: one row per hour).
    let observations =
        try db.scalarInt(infinite("observations", "time", Variables.hourlyNames), [.integer(Int64.min)]) ?? -1
    if observations != 0 { problems.append("\(observations) rows of observations hold an infinite value") }
    return problems
}

/// A fresh database with one location, for in-process fuzzing.
func fuzzStore() throws -> (SQLiteStore, Location) {
    let folder = Scratch.root.appendingPathComponent("reliability-\(UUID().uuidString)")
    let store = try SQLiteStore.open(path: folder.appendingPathComponent("fuzz.sqlite").path)
    try store.db.execute("PRAGMA synchronous = OFF")  // speed only: crash safety is the script's crash trials
    let location = try store.addLocation(
        name: "Fuzz", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: ["best_match"], now: 0)
    return (store, location)
}

/// A refusal's text must tell the user something, and not be a wall of echoed input or a raw SQLite error.
func unclearMessage(_ text: String) -> String? {
    if text.isEmpty { return "empty message" }
    if text.utf8.count > 600 { return "message of \(text.utf8.count) bytes" }
    if text.contains("SQLite error") { return "raw SQLite error: \(text.prefix(200))" }
    return nil
}

// MARK: - The mutation runs

enum HostileInput {
    /// The recorded responses that import as they are: the seeds of the mutations.
    static func seeds() throws -> [(String, [UInt8])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: fixturesPath)
            .filter {
                ($0.hasPrefix("forecast-") || $0.hasPrefix("historical-") || $0.hasPrefix("previous-runs-"))
                    && $0.hasSuffix(".json")
            }
            .sorted()
        return try names.compactMap { name in
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixturesPath + "/" + name)))
            return (try? ForecastDecoder.decodeSingle(bytes, defaultModel: "best_match")) == nil ? nil : (name, bytes)
        }
    }

    static func runResponses(count: Int, seed: UInt64) throws -> MutationFigures {
        let (store, location) = try fuzzStore()
        let mutators = try seeds().map { ($0.0, try JSONMutator($0.1)) }
        var rng = SplitMix64(seed: seed)
        var figures = MutationFigures()
        for i in 0..<count {
            let (name, mutator) = mutators[i % mutators.count]
            let kind = JSONMutator.kinds[Int(rng.next() % UInt64(JSONMutator.kinds.count))]
            let body = mutator.mutate(kind, &rng)
            let label = "#\(i) \(kind) of \(name)"
            let before = try tableCounts(store.db)
            let lastRun = try store.db.scalarInt("SELECT coalesce(max(id), 0) FROM forecast_runs") ?? 0
            var refused = true
            do {
                let response = try ForecastDecoder.decodeSingle(body, defaultModel: location.defaultModel)
                let fetch = FetchRecord(fetchedAt: 1_785_000_000 + Int64(i), origin: .import, request: label)
                _ = try store.store(response, for: location, fetch: fetch)
                refused = false
            } catch let error as DecodeError {
                if let why = unclearMessage(error.description) { figures.failures.append("\(label): \(why)") }
            } catch {
                figures.failures.append("\(label): refused with \(type(of: error)): \(String("\(error)".prefix(300)))")
            }
            if refused {
                if try tableCounts(store.db) != before {
                    figures.failures.append("\(label): refused but the tables changed")
                }
            } else {
                let problems = try consistencyProblems(store.db, runsAfter: lastRun)
                if !problems.isEmpty {
                    figures.failures.append("\(label): accepted, but \(problems.joined(separator: "; "))")
                }
            }
            figures.count(kind, refused: refused)
        }
        if try store.db.scalarText("PRAGMA integrity_check") != "ok" {
            figures.failures.append("integrity_check failed")
        }
        if try !store.db.rows("PRAGMA foreign_key_check", [], { $0.string(0) }).isEmpty {
            figures.failures.append("foreign_key_check failed")
        }
        figures.failures += try consistencyProblems(store.db).map { "at the end: \($0)" }
        return figures
    }

    static let csvColumns = [
        "temperature_2m", "precipitation", "wind_speed_10m", "weather_code", "relative_humidity_2m"
    ]

    static func baseCSV(rows: Int = 24) -> [[String]] {
        var lines = [["time"] + csvColumns]
        for h in 0..<rows {
            lines.append([
                String(format: "2026-07-%02dT%02d:00Z", 1 + h / 24, h % 24), String(Double(h) / 2 - 3), "0.2", "12.5",
                "3", "80"
            ])
        }
        return lines
    }

    static func render(_ lines: [[String]], separator: String = "\n") -> [UInt8] {
        Array(lines.map { $0.joined(separator: ",") }.joined(separator: separator).utf8) + Array(separator.utf8)
    }

    static let csvKinds = [
        "truncate", "byteFlip", "dropField", "extraField", "notNumber", "huge", "nonFinite", "negative",
        "duplicateTime", "invalidUTF8", "unterminatedQuote", "unknownColumn", "duplicateColumn",
        "timeNoZone", "badTime", "empty", "headerOnly", "lineEndings", "formula", "hugeField", "nul"
    ]

    static func mutateCSV(_ kind: String, _ rng: inout SplitMix64) -> [UInt8] {
        var lines = baseCSV()
        func row() -> Int { 1 + Int(rng.next() % UInt64(lines.count - 1)) }
        func col() -> Int { 1 + Int(rng.next() % UInt64(csvColumns.count)) }
        func pick(_ list: [String]) -> String { list[Int(rng.next() % UInt64(list.count))] }
        switch kind {
        case "truncate":
            let bytes = render(lines)
            return Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
        case "byteFlip":
            var bytes = render(lines)
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
            return bytes
        case "dropField":
            let r = row()
            lines[r].remove(at: Int(rng.next() % UInt64(lines[r].count)))
        case "extraField":
            let r = row()
            lines[r].append(pick(["1", "", "x"]))
        case "notNumber":
            lines[row()][col()] = pick(["abc", "\"1,5\"", "1.2.3", "12,5", "--1", "0x1p3", "1_000", "true", "\"\""])
        case "huge":
            lines[row()][col()] = pick([
                "1e308", "1.7976931348623157e308", "-1e308", "1e400", "-1e400", "9" + String(repeating: "9", count: 400)
            ])
        case "nonFinite": lines[row()][col()] = pick(["nan", "NaN", "inf", "-inf", "Infinity", "-Infinity", "+inf"])
        case "negative": lines[row()][col()] = pick(["-1", "-0", "-1e10", "-999"])
        case "duplicateTime":
            let r = row()
            lines[r][0] = lines[1 + (r % (lines.count - 1))][0]
            lines.append(lines[r])
        case "invalidUTF8":
            var bytes = render(lines)
            let bad: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xC0, 0xAF]]
            bytes.insert(contentsOf: bad[Int(rng.next() % 4)], at: Int(rng.next() % UInt64(bytes.count)))
            return bytes
        case "unterminatedQuote": lines[row()][col()] = "\"12.5"
        case "unknownColumn":
            lines[0][col()] = pick(["temperature", "Temperature_2m", "temp;DROP TABLE observations", "", "\u{1F327}"])
        case "duplicateColumn": lines[0][col()] = lines[0][1 == col() ? 2 : 1]
        case "timeNoZone": lines[row()][0] = "2026-07-01T05:00"
        case "badTime":
            lines[row()][0] = pick([
                "2026-13-45T25:61Z", "yesterday", "", "2026-07-01", "2026-02-30T00:00Z", "99999-01-01T00:00Z",
                "-2026-01-01T00:00Z", "2026-07-01T00:00+99:00"
            ])
        case "empty": return rng.next() % 2 == 0 ? [] : [0xEF, 0xBB, 0xBF]
        case "headerOnly": return render([lines[0]])
        case "lineEndings": return render(lines, separator: pick(["\r\n", "\r", "\n\n"]))
        case "formula": lines[row()][col()] = pick(["=1+1", "+1", "@SUM(A1)", "-1+1", "=HYPERLINK(\"x\")"])
        case "hugeField": lines[row()][col()] = String(repeating: "7", count: 100_000)
        case "nul": lines[row()][col()] = "1\u{0}2"
        default: break
        }
        return render(lines)
    }

    static func runCSV(count: Int, seed: UInt64) throws -> MutationFigures {
        let (store, location) = try fuzzStore()
        var rng = SplitMix64(seed: seed)
        var figures = MutationFigures()
        for i in 0..<count {
            let kind = csvKinds[Int(rng.next() % UInt64(csvKinds.count))]
            let body = mutateCSV(kind, &rng)
            let label = "#\(i) \(kind)"
            let source = "fuzz\(i)"
            let before = try tableCounts(store.db)
            var refused = true
            do {
                let csv = try StationCSV.parse(Data(body), timezone: nil, skipBadRows: false)
                let stored = try store.importObservations(
                    csv, locationID: location.id, source: source, recordedAt: 1_785_000_000)
                refused = false
                let rows =
                    try store.db.scalarInt("SELECT count(*) FROM observations WHERE source = ?", [.text(source)]) ?? -1
                if rows != Int64(stored) || stored != csv.rows.count {
                    figures.failures.append(
                        "\(label): accepted \(csv.rows.count) rows, reported \(stored), stored \(rows)")
                }
            } catch let problem as StationCSV.Problem {
                if let why = unclearMessage(problem.description) { figures.failures.append("\(label): \(why)") }
                if !problem.description.hasPrefix("line ") {
                    figures.failures.append("\(label): no line number in \(problem.description)")
                }
            } catch {
                figures.failures.append("\(label): refused with \(type(of: error)): \(String("\(error)".prefix(300)))")
            }
            if refused, try tableCounts(store.db) != before {
                figures.failures.append("\(label): refused but the tables changed")
            }
            figures.count(kind, refused: refused)
        }
        figures.failures += try consistencyProblems(store.db).map { "at the end: \($0)" }
        if try store.db.scalarText("PRAGMA integrity_check") != "ok" {
            figures.failures.append("integrity_check failed")
        }
        return figures
    }
}

// MARK: - SQL built by interpolation

/// Finds `\(...)` interpolations inside string literals that read as SQL.
enum SQLInterpolationScan {
    struct Finding: Equatable, CustomStringConvertible {
        var file: String
        var line: Int
        var expression: String
        var description: String { "\(file):\(line): \\(\(expression))" }
    }

    static let sqlMarkers = [
        "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "DROP ", "ALTER ", "PRAGMA ", "SAVEPOINT ",
        "RELEASE ", "ROLLBACK", " WHERE ", "VALUES", " FROM ", " JOIN ", "ORDER BY", "GROUP BY", " = ?", ">= ?", "< ?"
    ]

    /// Interpolated expressions that only ever carry fixed SQL: identifiers from code, never values.
    static let allowed: Set<String> = [
        "Self.locationColumns",  // a constant column list (StoreSQLite/Locations.swift)
        "name",  // savepoint name wxdb_spN (SQLite/Database.swift)
        "location", "time", "model", "source",  // column names passed by code to ExportFilter.whereClause
        "whereClause",  // built by ExportFilter.whereClause from those fixed fragments and `?` placeholders
        "forecastColumn", "observedColumn", "column",  // from SQLiteStore.hourlyColumn: a name in Variables.hourlyNames
        "columns.joined(separator: \", \")",  // names from SQLiteStore.hourlyColumn or Variables.dailyNames
        "table",  // a name from the constant SQLiteStore.tables list
        "rowTable.name"  // a name from the constant PostgresEngine.runRowTables list (PostgresStore/RunRows.swift)
    ]

    /// Every interpolation in an SQL-looking literal of `source`.
    static func scan(_ source: String, file: String) -> [Finding] {
        let s = Array(source.utf8)
        var findings: [Finding] = []
        var i = 0
        var line = 1
        func at(_ k: Int, _ text: String) -> Bool {
            let t = Array(text.utf8)
            return k + t.count <= s.count && Array(s[k..<k + t.count]) == t
        }
        while i < s.count {
            if s[i] == 0x0A {
                line += 1
                i += 1
                continue
            }
            if at(i, "//") {
                while i < s.count && s[i] != 0x0A { i += 1 }
                continue
            }
            if at(i, "/*") {
                i += 2
                while i < s.count && !at(i, "*/") {
                    if s[i] == 0x0A { line += 1 }
                    i += 1
                }
                i += 2
                continue
            }
            var hashes = 0
            var k = i
            while k < s.count && s[k] == UInt8(ascii: "#") {
                hashes += 1
                k += 1
            }
            guard k < s.count, s[k] == UInt8(ascii: "\"") else {
                i += 1
                continue
            }
            // A string literal starts at k, with `hashes` raw delimiters.
            let multi = at(k, "\"\"\"")
            let quote = (multi ? "\"\"\"" : "\"") + String(repeating: "#", count: hashes)
            let escape = "\\" + String(repeating: "#", count: hashes)
            var j = k + (multi ? 3 : 1)
            let startLine = line
            var text: [UInt8] = []
            var expressions: [(Int, String)] = []
            while j < s.count && !at(j, quote) {
                if at(j, escape + "(") {
                    // An interpolation: read to the matching parenthesis, skipping nested literals.
                    j += escape.utf8.count + 1
                    var depth = 1
                    let exprStart = j
                    var inString = false
                    while j < s.count {
                        let c = s[j]
                        if inString {
                            if c == UInt8(ascii: "\\") {
                                j += 2
                                continue
                            }
                            if c == UInt8(ascii: "\"") { inString = false }
                        } else if c == UInt8(ascii: "\"") {
                            inString = true
                        } else if c == UInt8(ascii: "(") {
                            depth += 1
                        } else if c == UInt8(ascii: ")") {
                            depth -= 1
                            if depth == 0 { break }
                        }
                        if c == 0x0A { line += 1 }
                        j += 1
                    }
                    expressions.append((line, String(decoding: s[exprStart..<min(j, s.count)], as: UTF8.self)))
                    text += Array(" X ".utf8)
                    j += 1
                    continue
                }
                if at(j, escape) {
                    text.append(s[j])
                    text.append(s[min(j + escape.utf8.count, s.count - 1)])
                    j += escape.utf8.count + 1
                    continue
                }
                if s[j] == 0x0A { line += 1 }
                text.append(s[j])
                j += 1
            }
            i = j + quote.utf8.count
            let literal = String(decoding: text, as: UTF8.self)
            if sqlMarkers.contains(where: { literal.contains($0) }) {
                findings += expressions.map {
                    Finding(file: file, line: $0.0 == 0 ? startLine : $0.0, expression: $0.1)
                }
            }
        }
        return findings
    }

    static func sourcesFindings() throws -> (files: Int, sqlInterpolations: Int, disallowed: [Finding]) {
        let root = packageRoot.appendingPathComponent("Sources")
        var files = 0
        var all: [Finding] = []
        for case let path as String in FileManager.default.enumerator(atPath: root.path)! where path.hasSuffix(".swift")
        {
            files += 1
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            all += scan(text, file: path)
        }
        return (files, all.count, all.filter { !allowed.contains($0.expression) })
    }
}

// MARK: - Tests

@Suite("Reliability (fast subset of Scripts/reliability)")
struct ReliabilityTests {
    @Test("hostile responses: refused with a clear error and nothing stored, or stored whole and consistent")
    func hostileResponses() throws {
        let figures = try HostileInput.runResponses(count: mutationCount(quick: 300), seed: 0x7EA7_0007)
        reportFigures("responses \(figures)")
        #expect(figures.failures.isEmpty, "\(figures.failures.prefix(20).joined(separator: "\n"))")
        #expect(figures.refused > 0 && figures.accepted > 0, "\(figures)")
    }

    @Test("hostile station CSVs: refused with a line number and nothing stored, or stored whole")
    func hostileStationCSV() throws {
        let figures = try HostileInput.runCSV(count: mutationCount(quick: 300), seed: 0x7EA7_0C5F)
        reportFigures("csv \(figures)")
        #expect(figures.failures.isEmpty, "\(figures.failures.prefix(20).joined(separator: "\n"))")
        #expect(figures.refused > 0 && figures.accepted > 0, "\(figures)")
    }

    @Test("no SQL literal in Sources/ interpolates anything but allow-listed identifiers")
    func noInterpolatedSQL() throws {
        // The scanner finds what it must find, and nothing in plain messages or placeholder SQL.
        let sample = #"""
            db.run("DELETE FROM locations WHERE name = '\(name2)'")
            db.run("INSERT INTO t (a) VALUES (?)", [.text(value)])
            let message = "no location named \(name2); see help"
            let sql = """
                SELECT \(Self.locationColumns) FROM locations
                WHERE id = \(id)
                """
            """#
        let found = SQLInterpolationScan.scan(sample, file: "sample").map(\.expression)
        #expect(found == ["name2", "Self.locationColumns", "id"])

        let result = try SQLInterpolationScan.sourcesFindings()
        reportFigures(
            "sqlscan files=\(result.files) interpolations=\(result.sqlInterpolations) disallowed=\(result.disallowed.count)"
        )
        #expect(result.files > 20)
        #expect(result.sqlInterpolations > 0, "the scanner found none of the known identifier interpolations")
        #expect(result.disallowed.isEmpty, "SQL built by interpolation: \(result.disallowed)")
    }

    static let hostileNames = [
        "O'Brien \"Quoted\"", "a; DROP TABLE locations; --", "Robert'); DELETE FROM forecast_runs; --",
        "Line\nBreak", "Tab\tInside", "🌧️ Regen über Köln", "=HYPERLINK(\"http://127.0.0.1\")", "+1 Plus", "-2 Minus",
        "@SUM(A1)", "%s %n %x", "back\\slash", "  padded  "
    ]

    @Test("hostile location names and paths with spaces survive add, import, list and export")
    func hostileNamesAndPaths() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        let folder = box.folder.appendingPathComponent("a dir with spaces; and 'quotes'")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let db = folder.appendingPathComponent("my wx db.sqlite").path
        box.environment["WXDB_DB"] = nil
        for (index, name) in Self.hostileNames.enumerated() {
            // `--` ends the options, so a name may start with '-' as with any Unix tool.
            let add = await box.run("--db", db, "locations", "add", "--lat", "1", "--lon", String(index), "--", name)
            #expect(add.code == 0, "\(name): \(add.stderrText)")
            let imported = await box.run(
                "--db", db, "import", box.fixture("forecast-current-hourly-daily-iso8601-copenhagen.json"),
                "--location", name, "--fetched-at", "2026-07-26T21:00Z", "--force")
            #expect(imported.code == 0, "\(name): \(imported.stderrText)")
        }
        let store = try SQLiteStore.openReadOnly(path: db)
        let counts = try store.tableCounts()
        #expect(counts.first { $0.table == "locations" }?.rows == Int64(Self.hostileNames.count))
        #expect(counts.first { $0.table == "forecast_runs" }?.rows == Int64(Self.hostileNames.count))
        let names = Set(try store.locations().map(\.name))
        #expect(names == Set(Self.hostileNames), "names are stored exactly as given")

        let list = await box.run("--db", db, "locations", "list", "--format", "json")
        #expect(list.code == 0)
        let listed =
            try JSONParser.parse(Array(list.stdout.utf8)).arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(Set(listed) == Set(Self.hostileNames), "\(list.stdout.prefix(500))")

        let output = folder.appendingPathComponent("export dir/hourly export.csv").path
        try FileManager.default.createDirectory(
            atPath: (output as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        for name in Self.hostileNames {
            let export = await box.run("--db", db, "export", "hourly", "--location", name, "--output", output)
            #expect(export.code == 0, "\(name): \(export.stderrText)")
            let rows = try CSVReader(Data(contentsOf: URL(fileURLWithPath: output))).readAll()
            #expect(rows.count > 1)
            let cell = rows.dropFirst().first?.fields.first ?? ""
            let expected = ["=", "+", "-", "@", "\t", "\r"].contains(where: { name.hasPrefix($0) }) ? "'" + name : name
            #expect(cell == expected, "export of \(name) wrote \(cell)")
        }
        #expect(try DatabaseInspection(path: db).integrityCheck() == ["ok"])
    }
}
