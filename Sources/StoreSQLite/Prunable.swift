import WxCore
import WxSQLite
import WxStore

extension SQLiteStore {
    /// The condition on `forecast_runs r` that `wxdb prune` removes rows by: issued before the
    /// cutoff, not pruned yet, and not the latest run of its location and model. The latest run is
    /// what the next fetch continues or repeats (see `matchingRun`): without its rows, a repeated
    /// response would bring nothing back.
    static let prunableCondition = """
        r.issued_at < ?1 AND r.pruned_at IS NULL
        AND EXISTS (SELECT 1 FROM forecast_runs n
                    WHERE n.location_id = r.location_id AND n.model = r.model
                      AND (n.issued_at > r.issued_at OR (n.issued_at = r.issued_at AND n.id > r.id)))
        """

    /// Up to `limit` runs `wxdb prune` would remove rows of (issued before `cutoff`), oldest id
    /// first.
    public func prunableRuns(before cutoff: Int64, limit: Int) throws -> [PrunableRun] {
        try db.rows(
            "SELECT r.id FROM forecast_runs r WHERE "
                + Self.prunableCondition + " ORDER BY r.id LIMIT ?2",
            [.integer(cutoff), .integer(Int64(limit))]
        ) { PrunableRun(id: $0.int64(0)) }
    }

    /// What pruning before `cutoff` would remove: runs, hourly rows, daily rows (nothing is changed).
    public func prunableTotals(before cutoff: Int64) throws -> (runs: Int, hours: Int, days: Int) {
        try db.firstRow(
            "SELECT count(*), coalesce(sum(r.hour_count), 0), coalesce(sum(r.day_count), 0) FROM forecast_runs r WHERE "
                + Self.prunableCondition,
            [.integer(cutoff)]
        ) { (runs: $0.int(0), hours: $0.int(1), days: $0.int(2)) } ?? (0, 0, 0)
    }
}

extension SQLiteStore {
    /// How many pruned runs of the location (of `model`, when given) once held `validTime` as a
    /// forecast hour (issued at or before it, inside their first and last valid time).
    public func prunedRunsCovering(_ validTime: Int64, locationID: Int64, model: String?) throws -> Int {
        try db.scalarInt(
            """
            SELECT count(*) FROM forecast_runs
            WHERE location_id = ?1 AND (?2 IS NULL OR model = ?2) AND pruned_at IS NOT NULL
              AND issued_at <= ?3 AND first_valid_time <= ?3 AND last_valid_time >= ?3
            """,
            [.integer(locationID), model.sqlValue, .integer(validTime)]
        ).map(Int.init) ?? 0
    }
}

extension SQLiteStore {
    /// How many pruned runs of the location (of `model`, when given) held forecast hours valid in
    /// `[start, end)` with a lead under `LeadRule`.
    public func prunedRuns(validBetween start: Int64, and end: Int64, locationID: Int64, model: String?) throws -> Int {
        try db.scalarInt(
            """
            SELECT count(*) FROM forecast_runs
            WHERE location_id = ?1 AND (?2 IS NULL OR model = ?2) AND pruned_at IS NOT NULL
              AND issued_at < ?4 AND issued_at > ?3 - ?5 AND first_valid_time < ?4 AND last_valid_time >= ?3
            """,
            [.integer(locationID), model.sqlValue, .integer(start), .integer(end), .integer(LeadRule.maxSeconds)]
        ).map(Int.init) ?? 0
    }
}
