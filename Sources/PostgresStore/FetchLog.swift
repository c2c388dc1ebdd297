// The fetch log and prune on PostgreSQL, as the SQLite engine writes them
// (StoreSQLite/ForecastRuns.swift, Summaries.swift).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// Records one attempt in the fetch log (location 0 when none can be named); a server's reason
    /// quoted in `error` is stored escaped, as it would be printed.
    public func logFetch(
        _ fetch: FetchRecord, locationID: Int64?, model: String?, outcome: String, runID: Int64?, error: String?
    ) throws {
        try inTransaction {
            let location = locationID ?? 0
            let values: [PostgresValue] = [
                .integer(fetch.fetchedAt), model.postgresValue, .text(fetch.origin.rawValue), .text(outcome),
                fetch.httpStatus.map { Int64($0) }.postgresValue, error.map { $0.escapingControls() }.postgresValue,
                fetch.durationMilliseconds.map { Int64($0) }.postgresValue, runID.postgresValue,
                fetch.request.postgresValue, fetch.apiWeight.postgresValue
            ]
            if location == 0 {
                // No counter row for "no location": the next id under the same lock the counters use.
                try db.lockForTransaction(Self.lockKey(0))
                let id = try db.scalarInt("SELECT coalesce(max(id), 0) + 1 FROM fetch_log WHERE location_id = 0") ?? 1
                try db.run(Self.fetchLogInsertSQL, [.integer(location), .integer(id)] + values)
            } else {
                // The id and the row in one statement (one round trip, not two); no counter row
                // means the location was removed.
                guard try db.run(Self.fetchLogCountedInsertSQL, [.integer(location)] + values) == 1 else {
                    throw StoreError.locationRemoved(name: "#\(location)")
                }
            }
        }
    }

    /// The fetch-log values `runInsertSQL` takes after the run's own (origin, outcome, HTTP status,
    /// duration, request, API weight; no error: the run was stored), as `logFetch` binds them.
    static func fetchLogValues(_ fetch: FetchRecord, outcome: String) -> [PostgresValue] {
        [
            .text(fetch.origin.rawValue), .text(outcome), fetch.httpStatus.map { Int64($0) }.postgresValue,
            fetch.durationMilliseconds.map { Int64($0) }.postgresValue, fetch.request.postgresValue,
            fetch.apiWeight.postgresValue
        ]
    }

    static let fetchLogColumns =
        "location_id, id, attempted_at, model, origin, outcome, http_status, error, duration_ms, run_id, request, api_weight"
    static let fetchLogInsertSQL =
        "INSERT INTO fetch_log (" + fetchLogColumns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    static let fetchLogCountedInsertSQL =
        "WITH c AS (UPDATE location_counters SET next_fetch_id = next_fetch_id + 1 WHERE location_id = $1"
        + " RETURNING location_id, next_fetch_id - 1 AS id)"
        + " INSERT INTO fetch_log (" + fetchLogColumns + ") SELECT c.location_id, c.id, $2::bigint, $3::text,"
        + " $4::text, $5::text, $6::bigint, $7::text, $8::bigint, $9::bigint, $10::text, $11::double precision FROM c"

    /// Records a failed attempt (its own small transaction, so it survives the failure it describes).
    public func logFailure(_ fetch: FetchRecord, locationID: Int64?, model: String?, error: String) throws {
        try logFailures(fetch, for: [(locationID, model)], error: error)
    }

    /// Records one failed attempt for several locations and models (a batched request) in one
    /// transaction of its own; a location removed meanwhile has no log left to write to.
    public func logFailures(_ fetch: FetchRecord, for targets: [(locationID: Int64?, model: String?)], error: String)
        throws
    {
        try db.transaction {
            for target in targets {
                if let id = target.locationID,
                    try db.scalarInt("SELECT count(*) FROM locations WHERE id = $1", [.integer(id)]) != 1
                {
                    continue
                }
                try logFetch(
                    fetch, locationID: target.locationID, model: target.model, outcome: "failed", runID: nil,
                    error: error)
            }
        }
    }

    /// Removes the hourly and daily rows of up to `limit` runs issued before `cutoff` (never a
    /// location and model's latest run, which the next fetch continues), oldest first, in one
    /// transaction under their locations' locks; the runs stay, marked pruned, and so do their
    /// pairs' sums. Nil when there is nothing left to prune.
    public func pruneBatch(issuedBefore cutoff: Int64, now: Int64, limit: Int) throws -> PruneBatch? {
        try db.transaction { () -> PruneBatch? in
            let runs = try db.rows(
                """
                SELECT r.location_id, r.id FROM forecast_runs r
                WHERE r.issued_at < $1::bigint AND r.pruned_at IS NULL
                  AND EXISTS (SELECT 1 FROM forecast_runs n
                              WHERE n.location_id = r.location_id AND n.model = r.model
                                AND (n.issued_at > r.issued_at OR (n.issued_at = r.issued_at AND n.id > r.id)))
                ORDER BY r.location_id, r.id LIMIT $2
                """, [.integer(cutoff), .integer(Int64(limit))]
            ) { (location: $0.int64(0), id: $0.int64(1)) }
            if runs.isEmpty { return nil }
            // In location order, as every other write takes one location's lock: no deadlock.
            for location in Set(runs.map(\.location)).sorted() { try db.lockForTransaction(Self.lockKey(location)) }
            var batch = PruneBatch(runs: runs.count)
            for run in runs {
                let key: [PostgresValue] = [.integer(run.location), .integer(run.id)]
                let deleted = try deleteRunRows(.run(location: run.location, id: run.id))
                batch.hourlyRows += deleted.hourly
                batch.dailyRows += deleted.daily
                try db.run(
                    "UPDATE forecast_runs SET pruned_at = $3 WHERE location_id = $1 AND id = $2", key + [.integer(now)])
            }
            return batch
        }
    }
}
