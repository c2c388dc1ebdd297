import WxCore
import WxSQLite
import WxStore

/// One stored forecast run of a location, as `wxdb query runs` lists it.
public struct RunSummary: Sendable, Equatable {
    public var id: Int64
    public var model: String
    /// Model initialisation time, or the first fetch of the content (see `issuedAtSource`).
    public var issuedAt: Int64
    /// `model_run` or `first_fetch`.
    public var issuedAtSource: String
    /// First and last successful fetch that returned this content.
    public var firstFetch: Int64
    public var lastFetch: Int64
    /// Fetches after the first that returned the same content (fetch_log outcome `repeated`).
    public var repeats: Int
    public var firstValidTime: Int64?
    public var lastValidTime: Int64?
    /// Hours the run had when stored (its rows are gone once pruned).
    public var hourCount: Int
    /// When `wxdb prune` removed the run's hourly and daily rows (its scores live on in
    /// `verification_summaries`); nil while the rows are stored.
    public var prunedAt: Int64?
}

/// `wxdb query runs`: a location's runs in issue order.
public enum RunsQuery {
    /// The runs of `location` issued within `issued` (of `model` when given), oldest first.
    /// Throws `QueryError.noRuns` when the location has none at all.
    public static func runs(_ store: Store, location: Location, issued: TimeRange = TimeRange(), model: String? = nil) throws -> [RunSummary] {
        try QuerySupport.requireRuns(store, location: location, model: model)
        return try store.db.rows(
            """
            SELECT r.id, r.model, r.issued_at, r.issued_at_source, r.fetched_at,
                   f.first_fetch, f.last_fetch, coalesce(f.repeats, 0),
                   r.first_valid_time, r.last_valid_time, r.hour_count, r.pruned_at
            FROM forecast_runs r
            LEFT JOIN (SELECT run_id, min(attempted_at) AS first_fetch, max(attempted_at) AS last_fetch,
                              sum(outcome = 'repeated') AS repeats
                       FROM fetch_log WHERE outcome != 'failed' AND run_id IS NOT NULL GROUP BY run_id) f
                   ON f.run_id = r.id
            WHERE r.location_id = ? AND (? IS NULL OR r.model = ?) AND r.issued_at >= ? AND r.issued_at < ?
            ORDER BY r.issued_at, r.model, r.id
            """,
            [.integer(location.id), model.sqlValue, model.sqlValue] + issued.bounds
        ) { row in
            let fetchedAt = row.int64(4)
            return RunSummary(
                id: row.int64(0), model: row.string(1), issuedAt: row.int64(2), issuedAtSource: row.string(3),
                firstFetch: min(row.optionalInt64(5) ?? fetchedAt, fetchedAt), lastFetch: row.optionalInt64(6) ?? fetchedAt,
                repeats: row.int(7), firstValidTime: row.optionalInt64(8), lastValidTime: row.optionalInt64(9),
                hourCount: row.int(10), prunedAt: row.optionalInt64(11))
        }
    }
}
