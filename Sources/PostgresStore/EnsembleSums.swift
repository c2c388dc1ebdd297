// ensemble_summaries (PostgreSQL migration 0004) kept current at write time: PostgreSQL's reads and
// write for WxStore's EnsembleSumsKeeper, which holds the rule (a write takes its cases' sums away
// before it and adds them after it, in its transaction) and the order of the folding, so both
// engines keep the same bits. `keepingSums` (Sums.swift) runs every observation and time-zone write
// through `keepingEnsembleSums`, as SQLite's keepingSums does.
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine: EnsembleSumsKeeper {
    static let ensembleRunColumns =
        "id, location_id, model, issued_at, first_valid_time, hour_count, member_count FROM ensemble_runs"

    static func ensembleRunWindow(_ row: PostgresRow) -> EnsembleRunWindow {
        EnsembleRunWindow(
            id: row.int64(0), location: row.int64(1), model: row.string(2), issuedAt: row.int64(3),
            firstValidTime: row.int64(4), hourCount: Int(row.int64(5)), memberCount: Int(row.int64(6)))
    }

    package func ensembleRunWindows(location: Int64, from: Int64, through: Int64) throws -> [EnsembleRunWindow] {
        try db.rows(
            "SELECT " + Self.ensembleRunColumns + """
                 WHERE location_id = $1 AND first_valid_time <= $3::bigint
                  AND first_valid_time + (hour_count - 1) * 3600 >= $2::bigint
                ORDER BY id
                """, [.integer(location), .integer(from), .integer(through)], Self.ensembleRunWindow)
    }

    /// A run's members of every variable at its hours within `[from, through]`, by variable name in
    /// byte order (SQLite's primary-key order). Each blob is read whole: packed blobs unpack whole.
    package func ensembleSlices(_ run: EnsembleRunWindow, from: Int64, through: Int64) throws -> [EnsembleSlice] {
        guard run.hours(from: from, through: through) != nil else { return [] }
        let blobs = try db.rows(
            """
            SELECT variable, members FROM ensemble_values WHERE location_id = $1 AND run_id = $2
            ORDER BY variable COLLATE "C"
            """, [.integer(run.location), .integer(run.id)]
        ) { (variable: $0.string(0), bytes: Self.bytes(fromHex: $0.string(1))) }
        return try blobs.compactMap {
            try run.slice(variable: $0.variable, blob: $0.bytes, from: from, through: through)
        }
    }

    static let ensembleVariableColumns = EnsembleModels.variables.map(\.name).joined(separator: ", ")

    package func ensembleObservations(location: Int64, source: String, from: Int64, to: Int64) throws
        -> [Int64: [Double]]
    {
        var values: [Int64: [Double]] = [:]
        let count = EnsembleModels.variables.count
        try db.stream(
            "SELECT time, " + Self.ensembleVariableColumns
                + " FROM observations WHERE location_id = $1 AND source = $2 AND time BETWEEN $3::bigint AND $4::bigint",
            [.integer(location), .text(source), .integer(from), .integer(to)]
        ) { row in
            values[row.int64(0)] = (0..<count).map { row.optionalDouble(1 + $0) ?? .nan }
        }
        return values
    }

    package func ensembleObservationsBySource(location: Int64, from: Int64, to: Int64) throws
        -> [String: [Int64: [Double]]]
    {
        var values: [String: [Int64: [Double]]] = [:]
        let count = EnsembleModels.variables.count
        try db.stream(
            "SELECT source, time, " + Self.ensembleVariableColumns
                + " FROM observations WHERE location_id = $1 AND time BETWEEN $2::bigint AND $3::bigint",
            [.integer(location), .integer(from), .integer(to)]
        ) { row in
            values[row.string(0), default: [:]][row.int64(1)] = (0..<count).map { row.optionalDouble(2 + $0) ?? .nan }
        }
        return values
    }

    package func locationTimezone(_ location: Int64) throws -> String {
        try db.scalarText("SELECT timezone FROM locations WHERE id = $1", [.integer(location)]) ?? "UTC"
    }

    static let ensembleSumColumns = EnsembleGroupSums.columnNames.joined(separator: ", ")
    /// The columns of ensemble_summaries' primary key after location_id, in the order of `keyRow`.
    static let ensembleKeyColumns = "source, variable, model, valid_from, lead_from_h"
    static let ensembleKeyCasts = ["::text", "::text", "::text", "::bigint", "::bigint"]
    static let ensembleWriteColumns =
        ["location_id", "source", "variable", "model", "valid_from", "valid_to", "lead_from_h", "lead_to_h"]
        + EnsembleGroupSums.columnNames + ["rank_counts", "events"]
    static let ensembleUpsertSuffix =
        " ON CONFLICT (location_id, source, variable, model, valid_from, lead_from_h) DO UPDATE SET "
        + ensembleWriteColumns.filter {
            !["location_id", "source", "variable", "model", "valid_from", "lead_from_h"]
                .contains($0)
        }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    /// Groups per statement: one statement carries at most 65,535 parameters.
    static let ensembleRowsPerStatement = 1000

    static func keyRow(_ key: EnsembleSumsKey) -> [PostgresValue] {
        [
            .text(key.source), .text(key.variable), .text(key.model), .integer(key.dayStart),
            .integer(Int64(key.leadFrom))
        ]
    }

    /// The kept groups under these keys' primary keys: per location, one statement for up to
    /// `ensembleRowsPerStatement` keys (not one each: a round trip per group was most of the sums' time).
    package func keptEnsembleGroups(_ keys: [EnsembleSumsKey]) throws -> [EnsembleSumsKey: EnsembleGroupSums] {
        let names = EnsembleGroupSums.columnNames
        var kept: [EnsembleSumsKey: EnsembleGroupSums] = [:]
        for (location, keys) in Dictionary(grouping: keys, by: \.location) {
            var byRow: [EnsembleSumsKey: [EnsembleSumsKey]] = [:]
            for key in keys { byRow[key.storedRow, default: []].append(key) }
            let rows = Array(byRow.keys)
            var start = 0
            while start < rows.count {
                let chunk = rows[start..<min(start + Self.ensembleRowsPerStatement, rows.count)]
                start += chunk.count
                let sql =
                    "SELECT " + Self.ensembleKeyColumns + ", " + Self.ensembleSumColumns
                    + ", rank_counts, events FROM ensemble_summaries WHERE location_id = $1 AND ("
                    + Self.ensembleKeyColumns + ") IN (VALUES "
                    + MultiRowStatement.sql(
                        prefix: "", suffix: ")", width: 5, rows: chunk.count, casts: Self.ensembleKeyCasts, first: 2)
                try db.stream(sql, [.integer(location)] + chunk.flatMap(Self.keyRow)) { row in
                    var stored = EnsembleSumsKey(
                        location: location, source: row.string(0), variable: row.string(1), model: row.string(2),
                        dayStart: row.int64(3), dayEnd: 0, leadFrom: Int(row.int64(4)), leadTo: 0)
                    stored = stored.storedRow
                    guard
                        let sums = EnsembleGroupSums(
                            variable: stored.variable, columns: names.indices.map { row.double(5 + $0) },
                            rankBytes: Self.bytes(fromHex: row.string(5 + names.count)),
                            eventBytes: Self.bytes(fromHex: row.string(6 + names.count)))
                    else { return }
                    for key in byRow[stored] ?? [] { kept[key] = sums }
                }
            }
        }
        return kept
    }

    /// Writes each group in place of its row: per location, the emptied rows removed in one
    /// statement, then the rest in multi-row upserts (the removals first, so an emptied row and a
    /// new one of the same primary key both take effect).
    package func writeEnsembleGroups(_ groups: [(key: EnsembleSumsKey, sums: EnsembleGroupSums)]) throws {
        for (location, groups) in Dictionary(grouping: groups, by: { $0.key.location }).sorted(by: { $0.key < $1.key })
        {
            var removed = MultiRowStatement(
                "DELETE FROM ensemble_summaries WHERE location_id = $1 AND (" + Self.ensembleKeyColumns
                    + ") IN (VALUES ",
                width: 5, suffix: ")", rowsPerStatement: Self.ensembleRowsPerStatement, casts: Self.ensembleKeyCasts,
                leading: [.integer(location)])
            for (key, group) in groups where group.isEmpty { try removed.append(Self.keyRow(key), db) }
            try removed.flush(db)
            let columns = Self.ensembleWriteColumns
            var upserts = MultiRowStatement(
                "INSERT INTO ensemble_summaries (" + columns.joined(separator: ", ") + ") VALUES ",
                width: columns.count, suffix: Self.ensembleUpsertSuffix,
                rowsPerStatement: Self.ensembleRowsPerStatement,
                casts: columns.map { $0 == "rank_counts" || $0 == "events" ? "::bytea" : "" })
            for (key, group) in groups where !group.isEmpty {
                try upserts.append(
                    [
                        .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                        .integer(key.dayStart), .integer(key.dayEnd), .integer(Int64(key.leadFrom)),
                        .integer(Int64(key.leadTo))
                    ]
                        + group.columns.enumerated().map { i, v in
                            EnsembleGroupSums.countColumns.contains(i) ? .integer(Int64(v.rounded())) : .real(v)
                        } + [.text(Self.hex(group.rankBytes)), .text(Self.hex(group.eventBytes))], db)
            }
            try upserts.flush(db)
        }
    }

    /// The kept ensemble groups of a location, model, variable and source whose days overlap
    /// `[from, to]`, by day and lead (never pending here: this engine keeps them from its first run).
    public func ensembleGroups(
        locationID: Int64, model: String, variable: String, source: String, from: Int64, to: Int64
    ) throws -> [EnsembleDayGroup]? {
        let names = EnsembleGroupSums.columnNames
        return try db.rows(
            "SELECT valid_from, valid_to, lead_from_h, lead_to_h, " + Self.ensembleSumColumns + """
                , rank_counts, events FROM ensemble_summaries
                WHERE location_id = $1 AND source = $2 AND variable = $3 AND model = $4 AND valid_to > $5::bigint
                  AND valid_from <= $6::bigint
                ORDER BY valid_from, lead_from_h
                """,
            [.integer(locationID), .text(source), .text(variable), .text(model), .integer(from), .integer(to)]
        ) { row -> EnsembleDayGroup? in
            guard
                let sums = EnsembleGroupSums(
                    variable: variable, columns: names.indices.map { row.double(4 + $0) },
                    rankBytes: Self.bytes(fromHex: row.string(4 + names.count)),
                    eventBytes: Self.bytes(fromHex: row.string(5 + names.count)))
            else { return nil }
            return EnsembleDayGroup(
                dayStart: row.int64(0), dayEnd: row.int64(1),
                bucket: LeadBucket(from: Int(row.int64(2)), to: Int(row.int64(3))), sums: sums)
        }.compactMap { $0 }
    }
}

extension PostgresEngine: EnsembleSumsAuditable {
    /// One transaction: a read-only REPEATABLE READ snapshot, or to repair one that writes, each
    /// location under its advisory lock.
    package func ensembleAudit<T>(repair: Bool, _ body: () throws -> T) throws -> T {
        try db.transaction {
            if !repair { _ = try db.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY") }
            return try body()
        }
    }

    package func lockForEnsembleRepair(location: Int64) throws {
        try db.lockForTransaction(Self.lockKey(location))
    }

    package func ensembleLocations() throws -> [Int64] {
        try db.rows("SELECT DISTINCT location_id FROM ensemble_runs ORDER BY location_id") { $0.int64(0) }
    }

    package func storedEnsembleGroups(location: Int64) throws -> [EnsembleSumsKey: EnsembleGroupSums] {
        let names = EnsembleGroupSums.columnNames
        var groups: [EnsembleSumsKey: EnsembleGroupSums] = [:]
        for (key, sums) in try db.rows(
            "SELECT source, variable, model, valid_from, valid_to, lead_from_h, lead_to_h, " + Self.ensembleSumColumns
                + ", rank_counts, events FROM ensemble_summaries WHERE location_id = $1",
            [.integer(location)],
            { row -> (EnsembleSumsKey, EnsembleGroupSums?) in
                let key = EnsembleSumsKey(
                    location: location, source: row.string(0), variable: row.string(1), model: row.string(2),
                    dayStart: row.int64(3), dayEnd: row.int64(4), leadFrom: Int(row.int64(5)),
                    leadTo: Int(row.int64(6)))
                return (
                    key,
                    EnsembleGroupSums(
                        variable: key.variable, columns: names.indices.map { row.double(7 + $0) },
                        rankBytes: Self.bytes(fromHex: row.string(7 + names.count)),
                        eventBytes: Self.bytes(fromHex: row.string(8 + names.count)))
                )
            })
        {
            // A row whose bytes do not fit reads as nothing kept: it differs from the members' sums.
            groups[key] = sums ?? EnsembleGroupSums(variable: key.variable)
        }
        return groups
    }
}
