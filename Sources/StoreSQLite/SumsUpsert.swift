import WxCore
import WxSQLite
import WxStore

// Writing the kept sums: a delta added to verification_summaries with one upsert per group, and a
// group's first and last valid hour looked up again when it lost pairs.

extension SQLiteStore {
    static let summaryUpsertSQL: String = {
        let sums = SummarySums.columns.map(\.name)
        let columns = summaryKeyColumns + sums + summarySpanColumns + ["first_valid_time", "last_valid_time"]
        // A score absent on one side takes the other's (as `SummarySums.merge`): rows prune wrote
        // before migration 0010 have no persistence sums, and keep none for their pruned pairs.
        // Written with as few expression nodes as say that: SQLite copies the DO UPDATE list while
        // preparing, and the CASE form made this the costliest statement an import prepares
        // (1.26 M instructions of its ~4.3 M). The continuous sums are NOT NULL columns, checked
        // before the conflict is, so neither side of their addition can be NULL.
        let required = Set(ContinuousScores.sumColumns.map(\.name))
        func add(_ c: String) -> String {
            required.contains(c)
                ? "\(c) = \(c) + excluded.\(c)" : "\(c) = coalesce(coalesce(\(c), 0) + excluded.\(c), \(c))"
        }
        // min/max of a NULL is NULL: then the side that is not NULL.
        func widen(_ c: String, _ f: String) -> String {
            "\(c) = coalesce(\(f)(\(c), excluded.\(c)), \(c), excluded.\(c))"
        }
        return "INSERT INTO verification_summaries (" + columns.joined(separator: ", ") + ") VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ") "
            + "ON CONFLICT (location_id, source, variable, model, lead_from_h, valid_from) DO UPDATE SET "
            + sums.map(add).joined(separator: ", ") + ", "
            + [widen("first_valid_time", "min"), widen("last_valid_time", "max")].joined(separator: ", ")
    }()

    /// Adds a delta to `verification_summaries`; groups left without pairs are removed.
    func applySums(_ delta: SumsDelta) throws {
        // Prepared on the first group that writes: an import whose run pairs with no observation
        // has none, and preparing this statement costs more than any other it runs.
        var prepared: Statement?
        for (key, group) in delta.groups {
            let values = group.sums.values
            // Nothing changed (the same pairs subtracted and added back): no write.
            if delta.removes, SumsDelta.isUnchanged(values) { continue }
            let upsert = try prepared ?? db.cachedStatement(Self.summaryUpsertSQL)
            prepared = upsert
            // Bound one by one: building an array of ~35 values per group cost more than the upsert.
            try upsert.bind(key.location, at: 1)
            try upsert.bind(.text(key.model), at: 2)
            try upsert.bind(.text(key.source), at: 3)
            try upsert.bind(.text(key.variable), at: 4)
            try upsert.bind(Int64(key.leadFrom), at: 5)
            try upsert.bind(Int64(key.leadTo), at: 6)
            try upsert.bind(.text(key.validDate), at: 7)
            var index: Int32 = 8
            for (column, value) in zip(SummarySums.columns, values) {
                if let value, column.isCount {
                    try upsert.bind(Int64(value.rounded()), at: index)
                } else {
                    try upsert.bind(value, at: index)
                }
                index += 1
            }
            try upsert.bind(key.validFrom, at: index)
            try upsert.bind(key.validTo, at: index + 1)
            try upsert.bind(group.firstValid.sqlValue, at: index + 2)
            try upsert.bind(group.lastValid.sqlValue, at: index + 3)
            try upsert.runToCompletion()
        }
        // Only a group that lost pairs can be left with none.
        let emptied = delta.emptied
        guard !emptied.isEmpty else { return }
        let prune = try db.cachedStatement(
            """
            DELETE FROM verification_summaries WHERE location_id = ? AND source = ? AND variable = ? AND model = ?
              AND lead_from_h = ? AND valid_from = ? AND n <= 0
            """)
        for key in emptied {
            try prune.bind([
                .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                .integer(Int64(key.leadFrom)), .integer(key.validFrom)
            ])
            try prune.runToCompletion()
        }
    }

    /// Sets a group's first and last valid hour from its stored pairs (a day that pruned runs had
    /// forecasts for keeps the hours it had as well: their pairs are gone from the rows).
    func refreshValidBounds(_ key: SummaryKey) throws {
        guard let variable = Variables.hourly.first(where: { $0.name == key.variable }) else { return }
        let forecastColumn = try Self.hourlyColumn(variable.name)
        let observedColumn = try Self.hourlyColumn(variable.observedVariable.name)
        let bounds = try db.cachedStatement(
            """
            SELECT min(valid_time), max(valid_time) FROM forecast_observation_pairs
            WHERE location_id = ?1 AND source = ?2 AND model = ?3 AND valid_time >= ?4 AND valid_time < ?5
              AND valid_time - issued_at >= ?6 AND valid_time - issued_at < ?7
              AND forecast_\(forecastColumn) IS NOT NULL AND observed_\(observedColumn) IS NOT NULL
            """)
        try bounds.bind([
            .integer(key.location), .text(key.source), .text(key.model), .integer(key.validFrom), .integer(key.validTo),
            .integer(Int64(key.leadFrom) * 3600), .integer(Int64(key.leadTo) * 3600)
        ])
        defer { bounds.reset() }
        guard let row = try bounds.step() else { return }
        let (first, last) = (row.optionalInt64(0), row.optionalInt64(1))
        let keep =
            try prunedRuns(validBetween: key.validFrom, and: key.validTo, locationID: key.location, model: key.model)
            > 0
        try db.run(
            """
            UPDATE verification_summaries SET
                first_valid_time = CASE WHEN ?7 THEN min(coalesce(?8, first_valid_time), first_valid_time) ELSE ?8 END,
                last_valid_time = CASE WHEN ?7 THEN max(coalesce(?9, last_valid_time), last_valid_time) ELSE ?9 END
            WHERE location_id = ?1 AND source = ?2 AND variable = ?3 AND model = ?4 AND lead_from_h = ?5 AND valid_from = ?6
            """,
            [
                .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                .integer(Int64(key.leadFrom)), .integer(key.validFrom), .integer(keep ? 1 : 0), first.sqlValue,
                last.sqlValue
            ])
    }
}
