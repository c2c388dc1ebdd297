// The hourly and daily rows of runs on PostgreSQL have no foreign key to their run (migration
// 0005: PostgreSQL checked it row by row, about half of a run's COPY). What the key's ON DELETE
// CASCADE did is done here: every path that removes runs or their rows (prune, `locations remove
// --purge`, `doctor --deep --repair`) deletes them through `deleteRunRows`, in its own transaction,
// and `doctor --deep` finds rows whose run does not exist.
import WxCore
import WxPostgres
import WxStore

/// Which runs' hourly and daily rows to delete.
enum RunRowsScope {
    /// One run of a location.
    case run(location: Int64, id: Int64)
    /// Every run of a location (the location is being removed).
    case location(Int64)
}

/// Hourly and daily rows whose run is not stored (only possible since their foreign key went).
public struct OrphanRunRows: Sendable, Equatable {
    /// The (location, run) pairs such rows name, in order.
    public var runs: [(location: Int64, run: Int64)] = []
    public var hourlyRows = 0
    public var dailyRows = 0

    public static func == (a: OrphanRunRows, b: OrphanRunRows) -> Bool {
        a.hourlyRows == b.hourlyRows && a.dailyRows == b.dailyRows && a.runs.elementsEqual(b.runs) { $0 == $1 }
    }
}

extension PostgresEngine {
    /// The one place hourly and daily rows are deleted: the caller holds the transaction and the
    /// locations' locks. Returns the rows deleted from each table.
    func deleteRunRows(_ scope: RunRowsScope) throws -> (hourly: Int, daily: Int) {
        switch scope {
        // A run's rows are in the float4 tables or the double ones (migration 0006): both are asked.
        case .run(let location, let id):
            let key: [PostgresValue] = [.integer(location), .integer(id)]
            return (
                try db.run("DELETE FROM hourly_forecasts_f4 WHERE location_id = $1 AND run_id = $2", key)
                    + db.run("DELETE FROM hourly_forecasts_f8 WHERE location_id = $1 AND run_id = $2", key),
                try db.run("DELETE FROM daily_forecasts_f4 WHERE location_id = $1 AND run_id = $2", key)
                    + db.run("DELETE FROM daily_forecasts_f8 WHERE location_id = $1 AND run_id = $2", key)
            )
        case .location(let location):
            let key: [PostgresValue] = [.integer(location)]
            return (
                try db.run("DELETE FROM hourly_forecasts_f4 WHERE location_id = $1", key)
                    + db.run("DELETE FROM hourly_forecasts_f8 WHERE location_id = $1", key),
                try db.run("DELETE FROM daily_forecasts_f4 WHERE location_id = $1", key)
                    + db.run("DELETE FROM daily_forecasts_f8 WHERE location_id = $1", key)
            )
        }
    }

    /// Hourly and daily rows whose run does not exist; with `repair` they are deleted, each run's
    /// under its location's lock, in one transaction. (The anti-joins are on `location_id`, so
    /// Citus runs them shard by shard.)
    public func orphanRunRows(repair: Bool) throws -> OrphanRunRows {
        try db.transaction {
            var found = OrphanRunRows()
            // Literal statements, one per table (the float4 and the double ones of migration 0006):
            // nothing is spliced into the SQL.
            let statements = [
                (
                    hourly: true,
                    sql: """
                    SELECT location_id, run_id, count(*) FROM hourly_forecasts_f4 x
                    WHERE NOT EXISTS (SELECT 1 FROM forecast_runs r WHERE r.location_id = x.location_id AND r.id = x.run_id)
                    GROUP BY location_id, run_id
                    """
                ),
                (
                    hourly: true,
                    sql: """
                    SELECT location_id, run_id, count(*) FROM hourly_forecasts_f8 x
                    WHERE NOT EXISTS (SELECT 1 FROM forecast_runs r WHERE r.location_id = x.location_id AND r.id = x.run_id)
                    GROUP BY location_id, run_id
                    """
                ),
                (
                    hourly: false,
                    sql: """
                    SELECT location_id, run_id, count(*) FROM daily_forecasts_f4 x
                    WHERE NOT EXISTS (SELECT 1 FROM forecast_runs r WHERE r.location_id = x.location_id AND r.id = x.run_id)
                    GROUP BY location_id, run_id
                    """
                ),
                (
                    hourly: false,
                    sql: """
                    SELECT location_id, run_id, count(*) FROM daily_forecasts_f8 x
                    WHERE NOT EXISTS (SELECT 1 FROM forecast_runs r WHERE r.location_id = x.location_id AND r.id = x.run_id)
                    GROUP BY location_id, run_id
                    """
                )
            ]
            var runs = Set<[Int64]>()
            for statement in statements {
                let rows = try db.rows(statement.sql) {
                    (location: $0.int64(0), run: $0.int64(1), count: Int($0.int64(2)))
                }
                for row in rows {
                    runs.insert([row.location, row.run])
                    if statement.hourly { found.hourlyRows += row.count } else { found.dailyRows += row.count }
                }
            }
            found.runs = runs.sorted { $0.lexicographicallyPrecedes($1) }.map { (location: $0[0], run: $0[1]) }
            guard repair else { return found }
            for location in Set(found.runs.map(\.location)).sorted() {
                try db.lockForTransaction(Self.lockKey(location))
            }
            for run in found.runs { _ = try deleteRunRows(.run(location: run.location, id: run.run)) }
            return found
        }
    }
}
