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
    static let ensembleKeyWhere =
        "location_id = $1 AND source = $2 AND variable = $3 AND model = $4 AND valid_from = $5 AND lead_from_h = $6"
    static let ensembleUpsertSQL: String = {
        let names = EnsembleGroupSums.columnNames + ["rank_counts", "events"]
        let columns = [
            "location_id", "source", "variable", "model", "valid_from", "valid_to", "lead_from_h", "lead_to_h"
        ]
        let placeholders = (1...(columns.count + names.count)).map { index in
            index > columns.count + names.count - 2 ? "$\(index)::bytea" : "$\(index)"
        }
        return "INSERT INTO ensemble_summaries (" + (columns + names).joined(separator: ", ") + ") VALUES ("
            + placeholders.joined(separator: ", ") + ") ON CONFLICT (location_id, source, variable, model, valid_from, "
            + "lead_from_h) DO UPDATE SET "
            + (["valid_to", "lead_to_h"] + names).map { "\($0) = excluded.\($0)" }
            .joined(separator: ", ")
    }()

    /// Adds a fold's groups to ensemble_summaries (each group read, merged and written back, as
    /// SQLite does, so the same additions happen in the same order); a group left with no case is removed.
    package func applyEnsembleSums(_ folder: EnsembleSumsFolder) throws {
        let names = EnsembleGroupSums.columnNames
        for (key, change) in folder.groups {
            let keyValues: [PostgresValue] = [
                .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                .integer(key.dayStart), .integer(Int64(key.leadFrom))
            ]
            let stored =
                try db.firstRow(
                    "SELECT " + Self.ensembleSumColumns + ", rank_counts, events FROM ensemble_summaries WHERE "
                        + Self.ensembleKeyWhere, keyValues
                ) { row in
                    EnsembleGroupSums(
                        variable: key.variable, columns: names.indices.map { row.double($0) },
                        rankBytes: Self.bytes(fromHex: row.string(names.count)),
                        eventBytes: Self.bytes(fromHex: row.string(names.count + 1)))
                }
            // A row whose bytes do not fit the layout is rewritten from the change alone, as SQLite does.
            var group = (stored ?? nil) ?? EnsembleGroupSums(variable: key.variable)
            group.merge(change)
            if group.isEmpty {
                try db.run("DELETE FROM ensemble_summaries WHERE " + Self.ensembleKeyWhere, keyValues)
                continue
            }
            let values: [PostgresValue] =
                [
                    .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                    .integer(key.dayStart), .integer(key.dayEnd), .integer(Int64(key.leadFrom)),
                    .integer(Int64(key.leadTo))
                ]
                + group.columns.enumerated().map { i, v in
                    EnsembleGroupSums.countColumns.contains(i) ? .integer(Int64(v.rounded())) : .real(v)
                } + [.text(Self.hex(group.rankBytes)), .text(Self.hex(group.eventBytes))]
            try db.run(Self.ensembleUpsertSQL, values)
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
