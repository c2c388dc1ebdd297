import WxCore
import WxSQLite
import WxStore

// ensemble_summaries (migration 0015) kept current at write time: the SQLite half of issue 31's
// ensemble sums, SQLite's reads and write for WxStore's EnsembleSumsKeeper (which holds the rule and
// the order of the folding; Core's EnsembleSumsFolder folds).

extension SQLiteStore: EnsembleSumsKeeper {
    /// Runs `write` keeping the ensemble sums of the cases in `scope` current (EnsembleSumsKeeper's
    /// rule, with the spans an enclosing write keeps left out).
    func keepingEnsembleSums<T>(_ scope: PairScope, _ write: () throws -> T) throws -> T {
        try keepingEnsembleSums(scope, keptOutside: sumsKeptOutside, write)
    }

    /// Adds the cases of a newly stored ensemble run (every source's observations at its hours).
    func addEnsembleRunSums(_ runID: Int64) throws {
        guard let run = try ensembleRunWindow(runID) else { return }
        try addEnsembleRunSums(run)
    }

    /// Adds the sums of the ensemble runs stored before migration 0015 when its marker is there; removes it.
    func rebuildPendingEnsembleSums() throws {
        guard (try db.scalarInt("SELECT count(*) FROM ensemble_sums_pending") ?? 0) > 0 else { return }
        try db.transaction {
            try db.run("DELETE FROM ensemble_summaries")
            for id in try db.rows("SELECT id FROM ensemble_runs ORDER BY id", [], { $0.int64(0) }) {
                try addEnsembleRunSums(id)
            }
            try db.run("DELETE FROM ensemble_sums_pending")
        }
    }

    static let ensembleRunColumns =
        "id, location_id, model, issued_at, first_valid_time, hour_count, member_count FROM ensemble_runs"

    static func ensembleRunWindow(_ row: Row) -> EnsembleRunWindow {
        EnsembleRunWindow(
            id: row.int64(0), location: row.int64(1), model: row.string(2), issuedAt: row.int64(3),
            firstValidTime: row.int64(4), hourCount: row.int(5), memberCount: row.int(6))
    }

    func ensembleRunWindow(_ id: Int64) throws -> EnsembleRunWindow? {
        try db.firstRow("SELECT " + Self.ensembleRunColumns + " WHERE id = ?", [.integer(id)], Self.ensembleRunWindow)
    }

    /// The location's ensemble runs whose hours overlap `[from, through]`.
    package func ensembleRunWindows(location: Int64, from: Int64, through: Int64) throws -> [EnsembleRunWindow] {
        let statement = try db.cachedStatement(
            "SELECT " + Self.ensembleRunColumns + """
                 WHERE location_id = ?1 AND first_valid_time <= ?3 AND first_valid_time + (hour_count - 1) * 3600 >= ?2
                ORDER BY id
                """)
        try statement.bind([.integer(location), .integer(from), .integer(through)])
        defer { statement.reset() }
        var runs: [EnsembleRunWindow] = []
        while let row = try statement.step() { runs.append(Self.ensembleRunWindow(row)) }
        return runs
    }

    /// A run's members of every variable at its hours within `[from, through]`: only those bytes are
    /// read from each blob (an hour's observation pairs with one hour of many runs). None once prune
    /// deleted the run's members.
    package func ensembleSlices(_ run: EnsembleRunWindow, from: Int64, through: Int64) throws -> [EnsembleSlice] {
        guard let span = run.hours(from: from, through: through) else { return [] }
        let (startHour, hours, first) = (span.start, span.count, span.first)
        let width = run.memberCount * 4
        // A raw blob gives only the span's bytes; a packed one (MemberBlob) must be unpacked whole.
        let statement = try db.cachedStatement(
            """
            SELECT variable, length(members) = ?4,
                CASE WHEN length(members) = ?4 THEN substr(members, ?2, ?3) ELSE members END
            FROM ensemble_values WHERE run_id = ?1
            """)
        try statement.bind([
            .integer(run.id), .integer(Int64(startHour * width + 1)), .integer(Int64(hours * width)),
            .integer(Int64(run.hourCount * width))
        ])
        defer { statement.reset() }
        var slices: [EnsembleSlice] = []
        while let row = try statement.step() {
            let bytes: [UInt8]
            if case .blob(let blob) = row.value(2) { bytes = blob } else { bytes = [] }
            if row.int(1) == 1 {
                guard let variable = EnsembleModels.variables.first(where: { $0.name == row.string(0) }),
                    bytes.count == hours * width
                else { continue }
                slices.append(
                    EnsembleSlice(
                        model: run.model, issuedAt: run.issuedAt, variable: variable, firstTime: first, hours: hours,
                        members: run.memberCount,
                        values: try MemberBlob.values(bytes, hours: hours, members: run.memberCount)))
            } else if let slice = try run.slice(variable: row.string(0), blob: bytes, from: from, through: through) {
                slices.append(slice)
            }
        }
        return slices
    }

    static let ensembleObservationsSQL =
        "SELECT time, " + EnsembleModels.variables.map(\.name).joined(separator: ", ")
        + " FROM observations WHERE location_id = ?1 AND time BETWEEN ?3 AND ?4 AND source = ?2"

    /// One source's observations of the ensemble variables in `[from, to]`, NaN for NULL.
    package func ensembleObservations(location: Int64, source: String, from: Int64, to: Int64) throws
        -> [Int64: [Double]]
    {
        let statement = try db.cachedStatement(Self.ensembleObservationsSQL)
        try statement.bind([.integer(location), .text(source), .integer(from), .integer(to)])
        defer { statement.reset() }
        var values: [Int64: [Double]] = [:]
        let count = EnsembleModels.variables.count
        while let row = try statement.step() {
            values[row.int64(0)] = (0..<count).map { row.optionalDouble(1 + $0) ?? .nan }
        }
        return values
    }

    /// Every source's observations of the ensemble variables in `[from, to]`.
    package func ensembleObservationsBySource(location: Int64, from: Int64, to: Int64) throws
        -> [String: [Int64: [Double]]]
    {
        let statement = try db.cachedStatement(
            "SELECT source, time, " + EnsembleModels.variables.map(\.name).joined(separator: ", ")
                + " FROM observations WHERE location_id = ?1 AND time BETWEEN ?2 AND ?3")
        try statement.bind([.integer(location), .integer(from), .integer(to)])
        defer { statement.reset() }
        var values: [String: [Int64: [Double]]] = [:]
        let count = EnsembleModels.variables.count
        while let row = try statement.step() {
            values[row.string(0), default: [:]][row.int64(1)] = (0..<count).map { row.optionalDouble(2 + $0) ?? .nan }
        }
        return values
    }

    package func locationTimezone(_ location: Int64) throws -> String {
        try db.scalarText("SELECT timezone FROM locations WHERE id = ?", [.integer(location)]) ?? "UTC"
    }

    static let ensembleSumColumns = EnsembleGroupSums.columnNames.joined(separator: ", ")

    /// The kept groups under these keys' primary keys, one seek each.
    package func keptEnsembleGroups(_ keys: [EnsembleSumsKey]) throws -> [EnsembleSumsKey: EnsembleGroupSums] {
        let read = try db.cachedStatement(
            "SELECT " + Self.ensembleSumColumns + """
                , rank_counts, events FROM ensemble_summaries
                WHERE location_id = ?1 AND source = ?2 AND variable = ?3 AND model = ?4 AND valid_from = ?5
                  AND lead_from_h = ?6
                """)
        let names = EnsembleGroupSums.columnNames
        var kept: [EnsembleSumsKey: EnsembleGroupSums] = [:]
        for key in keys {
            try read.bind(Self.ensembleKeyValues(key))
            defer { read.reset() }
            guard let row = try read.step() else { continue }
            func bytes(_ i: Int) -> [UInt8] {
                if case .blob(let b) = row.value(i) { return b }
                return []
            }
            kept[key] = EnsembleGroupSums(
                variable: key.variable, columns: names.indices.map { row.double($0) }, rankBytes: bytes(names.count),
                eventBytes: bytes(names.count + 1))
        }
        return kept
    }

    static func ensembleKeyValues(_ key: EnsembleSumsKey) -> [SQLValue] {
        [
            .integer(key.location), .text(key.source), .text(key.variable), .text(key.model), .integer(key.dayStart),
            .integer(Int64(key.leadFrom))
        ]
    }

    /// Writes each group in place of its row (removed first where empty, so an emptied row and a new
    /// one of the same primary key both take effect).
    package func writeEnsembleGroups(_ groups: [(key: EnsembleSumsKey, sums: EnsembleGroupSums)]) throws {
        let names = EnsembleGroupSums.columnNames
        let write = try db.cachedStatement(
            """
            INSERT OR REPLACE INTO ensemble_summaries (location_id, source, variable, model, valid_from, valid_to,
                lead_from_h, lead_to_h,
            """ + " " + Self.ensembleSumColumns + ", rank_counts, events) VALUES ("
                + (1...(8 + names.count + 2)).map { "?\($0)" }.joined(separator: ", ") + ")")
        let remove = try db.cachedStatement(
            """
            DELETE FROM ensemble_summaries WHERE location_id = ?1 AND source = ?2 AND variable = ?3 AND model = ?4
              AND valid_from = ?5 AND lead_from_h = ?6
            """)
        for (key, group) in groups where group.isEmpty {
            try remove.bind(Self.ensembleKeyValues(key))
            try remove.runToCompletion()
        }
        for (key, group) in groups where !group.isEmpty {
            let values: [SQLValue] =
                [
                    .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                    .integer(key.dayStart), .integer(key.dayEnd), .integer(Int64(key.leadFrom)),
                    .integer(Int64(key.leadTo))
                ]
                + group.columns.enumerated().map { i, v in
                    EnsembleGroupSums.countColumns.contains(i) ? .integer(Int64(v.rounded())) : .real(v)
                } + [.blob(group.rankBytes), .blob(group.eventBytes)]
            try write.bind(values)
            try write.runToCompletion()
        }
    }

    /// The kept ensemble groups of a location, model, variable and source whose days overlap
    /// `[from, to]`, by day and lead; nil while the sums of older runs are still to be added.
    public func ensembleGroups(
        locationID: Int64, model: String, variable: String, source: String, from: Int64, to: Int64
    ) throws -> [EnsembleDayGroup]? {
        guard (try db.scalarInt("SELECT count(*) FROM ensemble_sums_pending") ?? 0) == 0 else { return nil }
        let names = EnsembleGroupSums.columnNames
        return try db.rows(
            "SELECT valid_from, valid_to, lead_from_h, lead_to_h, " + Self.ensembleSumColumns + """
                , rank_counts, events FROM ensemble_summaries
                WHERE location_id = ?1 AND source = ?2 AND variable = ?3 AND model = ?4 AND valid_to > ?5 AND valid_from <= ?6
                ORDER BY valid_from, lead_from_h
                """,
            [.integer(locationID), .text(source), .text(variable), .text(model), .integer(from), .integer(to)]
        ) { row -> EnsembleDayGroup? in
            func bytes(_ i: Int) -> [UInt8] {
                if case .blob(let b) = row.value(i) { return b }
                return []
            }
            guard
                let sums = EnsembleGroupSums(
                    variable: variable, columns: names.indices.map { row.double(4 + $0) },
                    rankBytes: bytes(4 + names.count), eventBytes: bytes(5 + names.count))
            else { return nil }
            return EnsembleDayGroup(
                dayStart: row.int64(0), dayEnd: row.int64(1), bucket: LeadBucket(from: row.int(2), to: row.int(3)),
                sums: sums)
        }.compactMap { $0 }
    }

    static let prunableEnsembleSQL = """
        SELECT r.id FROM ensemble_runs r
        WHERE r.issued_at < ?1 AND EXISTS (SELECT 1 FROM ensemble_values v WHERE v.run_id = r.id)
          AND r.id <> (SELECT l.id FROM ensemble_runs l WHERE l.location_id = r.location_id AND l.model = r.model
                       ORDER BY l.issued_at DESC, l.id DESC LIMIT 1)
        """

    /// The ensemble runs issued before `cutoff` that still have members, except the latest run of
    /// each location and model (the next fetch may repeat it).
    public func prunableEnsembleRuns(issuedBefore cutoff: Int64) throws -> Int {
        try db.rows(Self.prunableEnsembleSQL, [.integer(cutoff)], { $0.int64(0) }).count
    }

    /// Deletes the members of those runs, keeping their headers (a later fetch of the same content is
    /// still a repeat) and their sums.
    public func pruneEnsembleMembers(issuedBefore cutoff: Int64) throws -> Int {
        try db.transaction {
            guard (try db.scalarInt("SELECT count(*) FROM ensemble_sums_pending") ?? 0) == 0 else { return 0 }
            let ids = try db.rows(Self.prunableEnsembleSQL, [.integer(cutoff)], { $0.int64(0) })
            for id in ids { try db.run("DELETE FROM ensemble_values WHERE run_id = ?", [.integer(id)]) }
            return ids.count
        }
    }
}

extension SQLiteStore: EnsembleSumsAuditable {
    /// One transaction: deferred to read, immediate (no other writer) to repair.
    package func ensembleAudit<T>(repair: Bool, _ body: () throws -> T) throws -> T {
        try db.transaction(repair ? .immediate : .deferred, body)
    }

    /// Nothing more to hold: the immediate transaction keeps every other writer out.
    package func lockForEnsembleRepair(location: Int64) throws {}

    /// The locations with ensemble runs (none while the sums of older runs are still to be added).
    package func ensembleLocations() throws -> [Int64] {
        guard (try db.scalarInt("SELECT count(*) FROM ensemble_sums_pending") ?? 0) == 0 else { return [] }
        return try db.rows("SELECT DISTINCT location_id FROM ensemble_runs ORDER BY location_id", []) { $0.int64(0) }
    }

    package func storedEnsembleGroups(location: Int64) throws -> [EnsembleSumsKey: EnsembleGroupSums] {
        let names = EnsembleGroupSums.columnNames
        var groups: [EnsembleSumsKey: EnsembleGroupSums] = [:]
        for (key, sums) in try db.rows(
            "SELECT source, variable, model, valid_from, valid_to, lead_from_h, lead_to_h, " + Self.ensembleSumColumns
                + ", rank_counts, events FROM ensemble_summaries WHERE location_id = ?1",
            [.integer(location)],
            { row -> (EnsembleSumsKey, EnsembleGroupSums?) in
                func bytes(_ i: Int) -> [UInt8] {
                    if case .blob(let b) = row.value(i) { return b }
                    return []
                }
                let key = EnsembleSumsKey(
                    location: location, source: row.string(0), variable: row.string(1), model: row.string(2),
                    dayStart: row.int64(3), dayEnd: row.int64(4), leadFrom: row.int(5), leadTo: row.int(6))
                return (
                    key,
                    EnsembleGroupSums(
                        variable: key.variable, columns: names.indices.map { row.double(7 + $0) },
                        rankBytes: bytes(7 + names.count), eventBytes: bytes(8 + names.count))
                )
            })
        {
            // A row whose bytes do not fit reads as nothing kept: it differs from the members' sums.
            groups[key] = sums ?? EnsembleGroupSums(variable: key.variable)
        }
        return groups
    }
}
