// What `wxdb prune` would remove, and which pruned runs once held an hour, on PostgreSQL: the
// SQLite engine's answers (Sources/StoreSQLite/Prunable.swift).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// The condition on `forecast_runs r` prune removes rows by (the SQLite engine's): issued before
    /// the cutoff ($1), not pruned yet, and not the latest run of its location and model.
    static let prunableCondition = """
        r.issued_at < $1 AND r.pruned_at IS NULL
        AND EXISTS (SELECT 1 FROM forecast_runs n
                    WHERE n.location_id = r.location_id AND n.model = r.model
                      AND (n.issued_at > r.issued_at OR (n.issued_at = r.issued_at AND n.id > r.id)))
        """

    /// Up to `limit` runs prune would remove rows of (issued before `cutoff`), by location, then
    /// oldest id first (run ids count per location here).
    public func prunableRuns(before cutoff: Int64, limit: Int) throws -> [PrunableRun] {
        try db.rows(
            "SELECT r.location_id, r.id FROM forecast_runs r WHERE " + Self.prunableCondition
                + " ORDER BY r.location_id, r.id LIMIT $2",
            [.integer(cutoff), .integer(Int64(limit))]
        ) { PrunableRun(id: $0.int64(1), locationID: $0.int64(0)) }
    }

    /// What pruning before `cutoff` would remove: runs, hourly rows, daily rows (nothing is changed).
    public func prunableTotals(before cutoff: Int64) throws -> (runs: Int, hours: Int, days: Int) {
        try db.firstRow(
            "SELECT count(*), coalesce(sum(r.hour_count), 0), coalesce(sum(r.day_count), 0) FROM forecast_runs r WHERE "
                + Self.prunableCondition,
            [.integer(cutoff)]
        ) { (runs: Int($0.int64(0)), hours: Int($0.int64(1)), days: Int($0.int64(2))) } ?? (0, 0, 0)
    }

    /// How many pruned runs of the location (of `model`, when given) once held `validTime` as a
    /// forecast hour.
    public func prunedRunsCovering(_ validTime: Int64, locationID: Int64, model: String?) throws -> Int {
        Int(
            try db.scalarInt(
                """
                SELECT count(*) FROM forecast_runs
                WHERE location_id = $1 AND ($2::text IS NULL OR model = $2::text) AND pruned_at IS NOT NULL
                  AND issued_at <= $3 AND first_valid_time <= $3 AND last_valid_time >= $3
                """, [.integer(locationID), model.postgresValue, .integer(validTime)]) ?? 0)
    }

    /// How many pruned runs of the location (of `model`, when given) held forecast hours valid in
    /// `[start, end)` with a lead under `LeadRule`.
    public func prunedRuns(validBetween start: Int64, and end: Int64, locationID: Int64, model: String?) throws -> Int {
        Int(
            try db.scalarInt(
                """
                SELECT count(*) FROM forecast_runs
                WHERE location_id = $1 AND ($2::text IS NULL OR model = $2::text) AND pruned_at IS NOT NULL
                  AND issued_at < $4::bigint AND issued_at > $3::bigint - $5::bigint AND first_valid_time < $4 AND last_valid_time >= $3
                """,
                [
                    .integer(locationID), model.postgresValue, .integer(start), .integer(end),
                    .integer(LeadRule.maxSeconds)
                ]) ?? 0)
    }
}
