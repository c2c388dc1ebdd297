import WxCore

// `wxdb copy`: a whole database from one engine to another (SQLite → PostgreSQL, back, or SQLite →
// SQLite), as raw rows with their ids. The tables and columns are named here once, engine-neutral:
// each engine's Copy.swift reads them out (`StoreDump`) and writes them in (`StoreLoad`) with its own
// SQL (PostgreSQL by COPY). The rows stream from one to the other, one at a time, so memory stays flat
// whatever the size; the target is written in one transaction and must be empty, so a copy that fails
// anywhere (a bad row, a killed connection, a count that does not match) leaves it as it was.

/// One value of a row on its way from one engine to another.
public enum CopyValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A table as `wxdb copy` moves it: the same name and columns on every engine. Every table that grows
/// has `location_id` (the forecast rows too, although SQLite finds it through their run).
public struct CopyTable: Sendable, Equatable {
    /// The table's name on both engines.
    public let name: String
    /// How the copy's report names it.
    public let label: String
    /// The columns, in the order every row of the copy carries them.
    public let columns: [String]
    /// Which columns hold a forecast run's id, a fetch's id or an ensemble run's id (renumbered together
    /// when the target needs ids unique across locations and the source's are not).
    let ids: [(column: String, kind: CopyIDKind)]

    public static func == (a: CopyTable, b: CopyTable) -> Bool { a.name == b.name }

    /// Where `column` is in `columns`.
    public func index(of column: String) -> Int? { columns.firstIndex(of: column) }
}

/// The kinds of id a copy may renumber.
enum CopyIDKind: CaseIterable { case run, fetch, ensembleRun }

/// Every table `wxdb copy` moves, in load order (a row's references first).
public enum CopyTables {
    static let hourlyValues = Variables.hourlyNames
    static let dailyValues = Variables.dailyNames

    public static let locations = CopyTable(
        name: "locations", label: "locations",
        columns: ["id", "name", "latitude", "longitude", "elevation", "timezone", "models", "created_at"], ids: [])
    public static let forecastRuns = CopyTable(
        name: "forecast_runs", label: "forecast runs",
        columns: [
            "location_id", "id", "model", "issued_at", "issued_at_source", "fetched_at", "grid_latitude",
            "grid_longitude", "grid_elevation", "utc_offset_seconds", "timezone", "content_hash", "first_valid_time",
            "last_valid_time", "hour_count", "day_count", "pruned_at"
        ], ids: [("id", .run)])
    public static let hourlyForecasts = CopyTable(
        name: "hourly_forecasts", label: "hourly rows", columns: ["location_id", "run_id", "valid_time"] + hourlyValues,
        ids: [("run_id", .run)])
    public static let dailyForecasts = CopyTable(
        name: "daily_forecasts", label: "daily rows", columns: ["location_id", "run_id", "date"] + dailyValues,
        ids: [("run_id", .run)])
    public static let observations = CopyTable(
        name: "observations", label: "observations",
        columns: ["location_id", "source", "time"] + hourlyValues + ["recorded_at"], ids: [])
    public static let contentHashes = CopyTable(
        name: "run_content_hashes", label: "content hashes",
        columns: ["location_id", "model", "content_hash", "run_id"], ids: [("run_id", .run)])
    public static let fetchLog = CopyTable(
        name: "fetch_log", label: "fetch log",
        columns: [
            "location_id", "id", "attempted_at", "model", "origin", "outcome", "http_status", "error", "duration_ms",
            "run_id", "request", "api_weight"
        ], ids: [("id", .fetch), ("run_id", .run)])
    public static let summaries = CopyTable(
        name: "verification_summaries", label: "kept sums",
        columns: [
            "location_id", "model", "source", "variable", "lead_from_h", "lead_to_h", "valid_date", "n", "sum_f",
            "sum_o", "sum_ff", "sum_oo", "sum_fo", "sum_abs_err", "sum_err", "sum_err_sq", "hits", "false_alarms",
            "misses", "correct_negatives", "brier_n", "brier_sum", "brier_events", "valid_from", "valid_to",
            "persistence_n", "forecast_sum_err_sq_ref", "persistence_sum_err_sq", "first_valid_time",
            "last_valid_time", "direction_n", "sum_sin_f", "sum_cos_f", "sum_sin_o", "sum_cos_o"
        ], ids: [])
    public static let sumsPending = CopyTable(
        name: "verification_sums_pending", label: "sums pending", columns: ["id"], ids: [])
    public static let ensembleRuns = CopyTable(
        name: "ensemble_runs", label: "ensemble runs",
        columns: [
            "location_id", "id", "model", "issued_at", "issued_at_source", "fetched_at", "grid_latitude",
            "grid_longitude", "grid_elevation", "first_valid_time", "hour_count", "member_count", "content_hash"
        ], ids: [("id", .ensembleRun)])
    public static let ensembleValues = CopyTable(
        name: "ensemble_values", label: "ensemble members", columns: ["location_id", "run_id", "variable", "members"],
        ids: [("run_id", .ensembleRun)])

    /// The ensemble sums kept at write time (SQLite 0015, PostgreSQL 0004): a copy without them would
    /// score ensembles from nothing, and pruned runs' cases live only here.
    public static let ensembleSummaries = CopyTable(
        name: "ensemble_summaries", label: "ensemble sums",
        columns: [
            "location_id", "source", "variable", "model", "valid_from", "valid_to", "lead_from_h", "lead_to_h"
        ] + EnsembleGroupSums.columnNames + ["rank_counts", "events"], ids: [])

    /// In load order.
    public static let all: [CopyTable] = [
        locations, forecastRuns, hourlyForecasts, dailyForecasts, observations, contentHashes, fetchLog, summaries,
        sumsPending, ensembleRuns, ensembleValues, ensembleSummaries
    ]
}

/// Each location's largest ids of one store, for renumbering and for the target's id counters.
public struct CopyLargestIDs: Sendable, Equatable {
    public var run: Int64 = 0
    public var fetch: Int64 = 0
    public var ensembleRun: Int64 = 0
    public init(run: Int64 = 0, fetch: Int64 = 0, ensembleRun: Int64 = 0) {
        self.run = run
        self.fetch = fetch
        self.ensembleRun = ensembleRun
    }
    subscript(kind: CopyIDKind) -> Int64 {
        get {
            switch kind {
            case .run: run
            case .fetch: fetch
            case .ensembleRun: ensembleRun
            }
        }
        set {
            switch kind {
            case .run: run = newValue
            case .fetch: fetch = newValue
            case .ensembleRun: ensembleRun = newValue
            }
        }
    }
}

/// A store read whole for `wxdb copy`, one row at a time.
public protocol StoreDump: AnyObject {
    /// Where the store is (a path, or a URL without its password).
    var path: String { get }
    /// Runs `body` over one consistent snapshot of the store (one read transaction), so a writer
    /// meanwhile changes neither the rows nor the counts the copy checks.
    func withCopySnapshot<T>(_ body: () throws -> T) throws -> T
    /// Why the store cannot be copied as it is (work a migration left to finish, rows no other engine
    /// has a table for), or nil.
    func copyObstacle() throws -> String?
    /// How many rows the table holds (0 when this store's schema has no such table).
    func copyCount(_ table: CopyTable) throws -> Int64
    /// Whether every forecast run, fetch and ensemble run id is unique across locations.
    func copyIDsUniqueAcrossLocations() throws -> Bool
    /// Each location's largest ids (location 0: the fetches no location can be named for).
    func copyLargestIDs() throws -> [Int64: CopyLargestIDs]
    /// Streams the table's rows, columns in `table.columns` order; a fetch with no location has a
    /// null `location_id`.
    func dumpRows(_ table: CopyTable, _ visit: ([CopyValue]) throws -> Void) throws
}

/// A store written whole by `wxdb copy`.
public protocol StoreLoad: AnyObject {
    /// Where the store is (a path, or a URL without its password).
    var path: String { get }
    /// Whether ids must be unique across locations (SQLite's run and fetch ids are the tables' keys).
    var copyNeedsGlobalIDs: Bool { get }
    /// What the store holds already, said for a message ("3 locations, 40 runs"), or nil when empty.
    func copyTargetContents() throws -> String?
    /// Why the store cannot take the table's rows (its schema lacks the table or a column), or nil.
    func copyCannotHold(_ table: CopyTable) throws -> String?
    /// Runs `body` in one write transaction: everything it loads is kept only when it returns.
    func withCopyTransaction<T>(_ body: () throws -> T) throws -> T
    /// Stores the rows `produce` hands to the sink it is given, columns in `table.columns` order.
    func loadRows(_ table: CopyTable, _ produce: (_ sink: ([CopyValue]) throws -> Void) throws -> Void) throws
    /// Sets what the engine derives from the loaded ids (PostgreSQL's per-location id counters).
    func finishCopy(largestIDs: [Int64: CopyLargestIDs]) throws
    /// How many rows the table holds now (inside the copy's transaction).
    func copyCount(_ table: CopyTable) throws -> Int64
}

/// Why a copy was refused or undone; the target is as it was.
public struct CopyError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a finished copy checked: each table's rows on both sides (equal, or the copy was undone).
public struct CopyReport: Sendable {
    public struct Line: Sendable {
        public let table: String
        public let label: String
        public let source: Int64
        public let target: Int64
    }
    public let lines: [Line]
    /// Whether ids were renumbered to be unique across locations.
    public let renumbered: Bool
}

/// Copies a whole store into an empty one (see the top of this file).
public enum StoreCopier {
    /// Copies everything in `source` into `target` in one transaction, then compares every table's
    /// count on both sides before committing. `progress` hears each table as it starts (a throw undoes the copy).
    public static func copy(
        from source: any StoreDump, to target: any StoreLoad, progress: (String) throws -> Void = { _ in }
    ) throws -> CopyReport {
        try source.withCopySnapshot {
            if let obstacle = try source.copyObstacle() {
                throw CopyError("cannot copy \(source.path) as it is: \(obstacle). Nothing was written")
            }
            if let contents = try target.copyTargetContents() {
                throw CopyError(
                    "the target \(target.path) already holds \(contents); wxdb copy only fills an empty database (a new SQLite file, or a PostgreSQL database with no wxdb rows). Nothing was written"
                )
            }
            var sourceCounts: [String: Int64] = [:]
            for table in CopyTables.all {
                let count = try source.copyCount(table)
                sourceCounts[table.name] = count
                if count > 0, let reason = try target.copyCannotHold(table) {
                    throw CopyError(
                        "the target \(target.path) cannot hold the \(count) row(s) of \(table.name): \(reason). Nothing was written"
                    )
                }
            }
            let largest = try source.copyLargestIDs()
            let renumber = target.copyNeedsGlobalIDs ? try !source.copyIDsUniqueAcrossLocations() : false
            let offsets = renumber ? Self.offsets(largest) : [:]
            var targetLargest: [Int64: CopyLargestIDs] = [:]
            let lines: [CopyReport.Line] = try target.withCopyTransaction {
                for table in CopyTables.all where sourceCounts[table.name, default: 0] > 0 {
                    try progress(table.label)
                    let location = table.index(of: "location_id")
                    let idColumns = table.ids.map { (index: table.index(of: $0.column)!, kind: $0.kind) }
                    try target.loadRows(table) { sink in
                        try source.dumpRows(table) { row in
                            guard !idColumns.isEmpty, let location else { return try sink(row) }
                            var row = row
                            let owner: Int64
                            if case .integer(let id) = row[location] { owner = id } else { owner = 0 }
                            for (index, kind) in idColumns {
                                guard case .integer(let id) = row[index] else { continue }
                                let moved = id + (offsets[owner]?[kind] ?? 0)
                                row[index] = .integer(moved)
                                // The fetch log's run_id is a reference; only a table's own id counts.
                                if table.name != CopyTables.fetchLog.name || kind == .fetch {
                                    targetLargest[owner, default: CopyLargestIDs()][kind] = max(
                                        targetLargest[owner, default: CopyLargestIDs()][kind], moved)
                                }
                            }
                            try sink(row)
                        }
                    }
                }
                try target.finishCopy(largestIDs: targetLargest)
                var lines: [CopyReport.Line] = []
                var differ: [String] = []
                for table in CopyTables.all {
                    let expected = sourceCounts[table.name, default: 0]
                    let absent = try expected == 0 && target.copyCannotHold(table) != nil
                    let found = absent ? 0 : try target.copyCount(table)
                    lines.append(.init(table: table.name, label: table.label, source: expected, target: found))
                    if found != expected { differ.append("\(table.name): \(expected) in the source, \(found) copied") }
                }
                if !differ.isEmpty {
                    throw CopyError(
                        "the copy's counts differ (\(differ.joined(separator: "; "))), so it was undone: the target \(target.path) is as it was"
                    )
                }
                return lines
            }
            return CopyReport(lines: lines, renumbered: renumber)
        }
    }

    /// Per location, what to add to each kind of id so that ids of different locations never meet:
    /// each location's ids follow the largest of the locations before it (by location id).
    static func offsets(_ largest: [Int64: CopyLargestIDs]) -> [Int64: CopyLargestIDs] {
        var offsets: [Int64: CopyLargestIDs] = [:]
        var next = CopyLargestIDs()
        for location in largest.keys.sorted() {
            offsets[location] = next
            let ids = largest[location]!
            for kind in CopyIDKind.allCases { next[kind] += ids[kind] }
        }
        return offsets
    }
}
