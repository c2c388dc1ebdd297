// verification_summaries kept current at write time on PostgreSQL, as the SQLite engine keeps them
// (StoreSQLite/SumsScopes.swift): every write that can create, change or remove pairs subtracts
// the sums of the pairs it touches before it and adds them after it, in the same transaction. The
// pairs are read here with PostgreSQL's SQL and folded by WxStore's `PairSummer` (the same lead
// buckets, local days and persistence references as SQLite's); the change goes in a few multi-row
// upserts (MultiRowStatement).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// Runs `write` with its pairs' sums kept as `scope` says, then restores the scope around it.
    func keeping<T>(_ scope: SumsKeeping, _ write: () throws -> T) rethrows -> T {
        let outer = sumsKeeping
        sumsKeeping = scope
        defer { sumsKeeping = outer }
        return try write()
    }

    /// Runs `write`, keeping the sums of the pairs in `scope` (of location `location`) current:
    /// subtracted before, added after. Inside a write that keeps them itself, only runs `write`.
    /// `byRun` folds an observation scope's pairs run by run, as SQLite's `keepingObservationSums`
    /// (the observation writes) does; without it hour by hour, as its `collectSums` (`storeAll`).
    @discardableResult
    func keepingSums<T>(_ scope: PairScope, location: Int64, byRun: Bool = false, _ write: () throws -> T) throws -> T {
        guard sumsKeeping.keepsSums else { return try write() }
        var before = SumsDelta()
        try collectSums(scope, location: location, byRun: byRun, into: &before)
        let result = try keepingEnsembleSums(scope, keptOutside: sumsKeeping.keptOutside, write)
        var after = SumsDelta()
        try collectSums(scope, location: location, byRun: byRun, into: &after)
        let (delta, shrunk) = SumsDelta.change(from: before, to: after)
        try applySums(delta)
        for key in shrunk { try refreshValidBounds(key) }
        return result
    }

    /// Adds the sums of pairs that did not exist before (a new run's, a continued run's new hours).
    func addSums(_ scope: PairScope, location: Int64) throws {
        guard sumsKeeping.keepsSums else { return }
        var delta = SumsDelta()
        try collectSums(scope, location: location, into: &delta)
        try applySums(delta)
    }

    static let pairColumns =
        "r.location_id, r.model, o.source, r.issued_at, h.valid_time, "
        + Variables.hourlyNames.map { "h.\($0)" }.joined(separator: ", ") + ", "
        + Variables.hourlyNames.map { "o.\($0)" }.joined(separator: ", ")
    /// 0 ≤ lead < 384 h (`LeadRule`).
    static let pairLead =
        "h.valid_time - r.issued_at >= 0 AND h.valid_time - r.issued_at < \(LeadRule.maxSeconds)"

    static let runPairsSQL =
        "SELECT " + pairColumns + """
             FROM forecast_runs r
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
                AND h.valid_time <= (SELECT max(time) FROM observations WHERE location_id = $1)
            JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time
            WHERE r.location_id = $1 AND r.id = $2 AND
            """ + " " + pairLead + " ORDER BY h.valid_time, o.source COLLATE \"C\""
    static let observationPairsSQL =
        "SELECT " + pairColumns + """
             FROM observations o
            JOIN forecast_runs r ON r.location_id = o.location_id AND r.issued_at <= o.time
                AND r.issued_at > o.time - $5::bigint
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id AND h.valid_time = o.time
            WHERE o.location_id = $1 AND o.source = $2 AND o.time BETWEEN $3::bigint AND $4::bigint
            """
    static let observationPairsByHourSQL = observationPairsSQL + " ORDER BY o.time, r.issued_at, r.id"
    static let observationPairsByRunSQL = observationPairsSQL + " ORDER BY r.issued_at, r.id, h.valid_time"
    /// The pairs of the source of the runs issued in `[from, through + 1 h)` at hours outside the
    /// span, up to the source's latest observation: the span's observations are their persistence
    /// reference, so their sums change with it.
    static let referencingPairsSQL =
        "SELECT " + pairColumns + """
             FROM forecast_runs r
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
                AND h.valid_time <= (SELECT max(time) FROM observations WHERE location_id = $1 AND source = $2)
            JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time AND o.source = $2
            WHERE r.location_id = $1 AND r.issued_at >= $3::bigint AND r.issued_at < $4::bigint + 3600
              AND NOT (h.valid_time BETWEEN $3::bigint AND $4::bigint) AND
            """ + " " + pairLead + " ORDER BY r.issued_at, r.id, h.valid_time"
    static let locationPairsSQL =
        "SELECT " + pairColumns + """
             FROM forecast_runs r
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
            JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time
            WHERE r.location_id = $1 AND
            """ + " " + pairLead + " ORDER BY r.issued_at, r.id, h.valid_time, o.source COLLATE \"C\""

    /// Adds the sums of every pair in `scope` as the database holds them now. Floating-point
    /// addition is not associative: the pairs are folded in the order SQLite's plans read them
    /// (its engine's SumsScopes.swift), so both engines keep the same bits.
    func collectSums(_ scope: PairScope, location: Int64, byRun: Bool = false, into delta: inout SumsDelta) throws {
        // Made at the first pair (a scope without pairs, as a new run's often is, costs no lookup
        // of the location's zone).
        var summer: PairSummer?
        // The pairs are read whole before they are summed: summing looks up persistence references,
        // and the connection takes no other statement while it streams one.
        func add(_ sql: String, _ arguments: [PostgresValue], only validTimes: Set<Int64>? = nil) throws {
            var pairs = PairRows()
            try db.stream(sql, arguments) { row in
                let valid = row.int64(4)
                if let validTimes, !validTimes.contains(valid) { return }
                pairs.keys.append((row.int64(0), row.string(1), row.string(2), row.int64(3), valid))
                for index in 0..<PairRows.width { pairs.values.append(row.optionalDouble(5 + index) ?? .nan) }
            }
            guard !pairs.keys.isEmpty else { return }
            if summer == nil { summer = try pairSummer(locationID: location) }
            try pairs.add(into: &summer!)
        }
        switch scope {
        case .run(let id, let validTimes):
            // Only hours up to the latest observation can pair: a new run's later hours are not read
            // (the latest is looked up in the same statement: one round trip less per run).
            try add(Self.runPairsSQL, [.integer(location), .integer(id)], only: validTimes)
        case .observations(_, let source, let from, let through):
            try add(
                byRun ? Self.observationPairsByRunSQL : Self.observationPairsByHourSQL,
                [.integer(location), .text(source), .integer(from), .integer(through), .integer(LeadRule.maxSeconds)])
            try add(Self.referencingPairsSQL, [.integer(location), .text(source), .integer(from), .integer(through)])
        case .location:
            try add(Self.locationPairsSQL, [.integer(location)])
        }
        summer?.flush(into: &delta)
    }

    /// A summer for the pairs of a location: its zone's days, the spans an enclosing write keeps
    /// left out, persistence references read with `referenceSQL`.
    func pairSummer(locationID: Int64) throws -> PairSummer {
        let timezone =
            try db.scalarText("SELECT timezone FROM locations WHERE id = $1", [.integer(locationID)]) ?? "UTC"
        return PairSummer(timezone: timezone, keptOutside: sumsKeeping.keptOutside) { location, source, issued in
            try self.persistenceReference(location: location, source: source, issuedAt: issued)
        }
    }

    static let referenceSQL =
        "SELECT " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM observations WHERE location_id = $1 AND source = $2 AND time <= $3::bigint AND time > $4::bigint"
        + " ORDER BY time DESC"

    /// The persistence reference of each column at an issue time (`PersistenceReference`).
    func persistenceReference(location: Int64, source: String, issuedAt: Int64) throws -> [Double?] {
        var reference = PersistenceReference()
        for row in try db.rows(
            Self.referenceSQL,
            [.integer(location), .text(source), .integer(issuedAt), .integer(issuedAt - PersistenceReference.window)],
            { row in (0..<PairSummer.count).map { row.optionalDouble($0) } })
        {
            if reference.takeOlder({ row[$0] }) { break }
        }
        return reference.values
    }

    static let summaryKeyColumns = [
        "location_id", "model", "source", "variable", "lead_from_h", "lead_to_h", "valid_date"
    ]
    static let summaryColumns =
        summaryKeyColumns + SummarySums.columns.map(\.name) + [
            "valid_from", "valid_to", "first_valid_time", "last_valid_time"
        ]
    /// What an upserted row does to a stored group: its sums are added, its bounds widened.
    static let summaryConflictSQL: String = {
        let sums = SummarySums.columns.map(\.name)
        let table = "verification_summaries"
        // A score absent on one side takes the other's (as `SummarySums.merge`).
        func add(_ c: String) -> String {
            c + " = CASE WHEN excluded." + c + " IS NULL THEN " + table + "." + c + " ELSE coalesce(" + table + "."
                + c + ", 0) + excluded." + c + " END"
        }
        func widen(_ c: String, _ f: String) -> String {
            c + " = CASE WHEN excluded." + c + " IS NULL THEN " + table + "." + c + " WHEN " + table + "." + c
                + " IS NULL THEN excluded." + c + " ELSE " + f + "(" + table + "." + c + ", excluded." + c + ") END"
        }
        return " ON CONFLICT (location_id, source, variable, model, valid_from, lead_from_h) DO UPDATE SET "
            + sums.map(add).joined(separator: ", ") + ", "
            + [widen("first_valid_time", "least"), widen("last_valid_time", "greatest")].joined(separator: ", ")
    }()
    /// Groups per upsert statement: one statement carries at most 65,535 parameters.
    static let summaryRowsPerStatement = 1000

    /// Adds a delta to `verification_summaries`; groups left without pairs are removed. The groups
    /// go in a few multi-row upserts, not one statement each (a round trip per group was most of a
    /// store's time): each group's stored sums still take one addition of the group's delta, as
    /// the SQLite engine adds it, so both keep the same bits.
    func applySums(_ delta: SumsDelta) throws {
        var rows = MultiRowStatement(
            "INSERT INTO verification_summaries (" + Self.summaryColumns.joined(separator: ", ") + ") VALUES ",
            width: Self.summaryColumns.count, suffix: Self.summaryConflictSQL,
            rowsPerStatement: Self.summaryRowsPerStatement
        )
        // Two rows of one statement may not update the same stored row: a group whose conflict key
        // is already in the statement (days of two zones 24 h apart after a zone change) waits for the next.
        var conflictKeys = Set<ConflictKey>()
        for (key, group) in delta.groups {
            let values = group.sums.values
            // Nothing changed (the same pairs subtracted and added back): no write.
            if delta.removes, SumsDelta.isUnchanged(values) { continue }
            var arguments: [PostgresValue] = [
                .integer(key.location), .text(key.model), .text(key.source), .text(key.variable),
                .integer(Int64(key.leadFrom)), .integer(Int64(key.leadTo)), .text(key.validDate)
            ]
            for (column, value) in zip(SummarySums.columns, values) {
                if let value, column.isCount {
                    arguments.append(.integer(Int64(value.rounded())))
                } else {
                    arguments.append(value.postgresValue)
                }
            }
            arguments += [
                .integer(key.validFrom), .integer(key.validTo), group.firstValid.postgresValue,
                group.lastValid.postgresValue
            ]
            let conflict = ConflictKey(
                source: key.source, variable: key.variable, model: key.model, validFrom: key.validFrom,
                leadFrom: key.leadFrom, location: key.location)
            if !conflictKeys.insert(conflict).inserted {
                try rows.flush(db)
                conflictKeys = [conflict]
            }
            try rows.append(arguments, db)
            if rows.isEmpty { conflictKeys = [] }
        }
        try rows.flush(db)
        // Per location, so that on Citus each DELETE goes to the one shard holding it.
        for (location, keys) in Dictionary(grouping: delta.emptied, by: \.location) {
            var emptied = MultiRowStatement(
                "DELETE FROM verification_summaries WHERE location_id = $1 AND n <= 0"
                    + " AND (source, variable, model, lead_from_h, valid_from) IN (VALUES ",
                width: 5, suffix: ")", rowsPerStatement: Self.summaryRowsPerStatement,
                casts: ["::text", "::text", "::text", "::bigint", "::bigint"], leading: [.integer(location)])
            for key in keys {
                try emptied.append(
                    [
                        .text(key.source), .text(key.variable), .text(key.model), .integer(Int64(key.leadFrom)),
                        .integer(key.validFrom)
                    ], db)
            }
            try emptied.flush(db)
        }
    }

    /// The columns of `verification_summaries`' primary key.
    struct ConflictKey: Hashable {
        var source: String
        var variable: String
        var model: String
        var validFrom: Int64
        var leadFrom: Int
        var location: Int64
    }

    /// Sets a group's first and last valid hour from its stored pairs (a day that pruned runs had
    /// forecasts for keeps the hours it had as well: their pairs are gone from the rows).
    func refreshValidBounds(_ key: SummaryKey) throws {
        guard let variable = Variables.hourly.first(where: { $0.name == key.variable }),
            let forecastColumn = Variables.hourlyNames.first(where: { $0 == variable.name }),
            let observedColumn = Variables.hourlyNames.first(where: { $0 == variable.observedVariable.name })
        else { return }
        let bounds = try db.firstRow(
            """
            SELECT min(h.valid_time), max(h.valid_time) FROM forecast_runs r
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
            JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time
            WHERE r.location_id = $1 AND o.source = $2 AND r.model = $3
              AND h.valid_time >= $4::bigint AND h.valid_time < $5::bigint
              AND h.valid_time - r.issued_at >= $6::bigint AND h.valid_time - r.issued_at < $7::bigint
              AND h.\(forecastColumn) IS NOT NULL AND o.\(observedColumn) IS NOT NULL
            """,
            [
                .integer(key.location), .text(key.source), .text(key.model), .integer(key.validFrom),
                .integer(key.validTo), .integer(Int64(key.leadFrom) * 3600), .integer(Int64(key.leadTo) * 3600)
            ]
        ) { (first: $0.optionalInt64(0), last: $0.optionalInt64(1)) }
        guard let bounds else { return }
        let keep =
            try db.scalarInt(
                """
                SELECT count(*) FROM forecast_runs WHERE location_id = $1 AND model = $2 AND pruned_at IS NOT NULL
                  AND issued_at < $4::bigint AND issued_at > $3::bigint - $5::bigint
                  AND first_valid_time < $4::bigint AND last_valid_time >= $3::bigint
                """,
                [
                    .integer(key.location), .text(key.model), .integer(key.validFrom), .integer(key.validTo),
                    .integer(LeadRule.maxSeconds)
                ]) ?? 0 > 0
        try db.run(
            """
            UPDATE verification_summaries SET
                first_valid_time = CASE WHEN $7 THEN least(coalesce($8::bigint, first_valid_time), first_valid_time) ELSE $8::bigint END,
                last_valid_time = CASE WHEN $7 THEN greatest(coalesce($9::bigint, last_valid_time), last_valid_time) ELSE $9::bigint END
            WHERE location_id = $1 AND source = $2 AND variable = $3 AND model = $4 AND lead_from_h = $5 AND valid_from = $6
            """,
            [
                .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                .integer(Int64(key.leadFrom)), .integer(key.validFrom), .bool(keep), bounds.first.postgresValue,
                bounds.last.postgresValue
            ])
    }
}
