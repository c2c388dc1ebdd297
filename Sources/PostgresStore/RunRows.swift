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
    /// The tables holding runs' hourly and daily rows, the float4 and the double ones of migration
    /// 0006 (a run's rows are in one or the other, so both are always asked): the only names
    /// `deleteRunRows` and `orphanRunRows` put into their SQL.
    static let runRowTables: [(name: String, hourly: Bool)] = [
        ("hourly_forecasts_f4", true), ("hourly_forecasts_f8", true),
        ("daily_forecasts_f4", false), ("daily_forecasts_f8", false)
    ]

    /// The one place hourly and daily rows are deleted: the caller holds the transaction and the
    /// locations' locks. Returns the rows deleted from each table.
    func deleteRunRows(_ scope: RunRowsScope) throws -> (hourly: Int, daily: Int) {
        var deleted = (hourly: 0, daily: 0)
        for rowTable in Self.runRowTables {
            let rows: Int
            switch scope {
            case .run(let location, let id):
                rows = try db.run(
                    "DELETE FROM \(rowTable.name) WHERE location_id = $1 AND run_id = $2",
                    [.integer(location), .integer(id)])
            case .location(let location):
                rows = try db.run("DELETE FROM \(rowTable.name) WHERE location_id = $1", [.integer(location)])
            }
            if rowTable.hourly { deleted.hourly += rows } else { deleted.daily += rows }
        }
        return deleted
    }

    /// Hourly and daily rows whose run does not exist; with `repair` they are deleted, each run's
    /// under its location's lock, in one transaction. (The anti-joins are on `location_id`, so
    /// Citus runs them shard by shard.)
    public func orphanRunRows(repair: Bool) throws -> OrphanRunRows {
        try db.transaction {
            var found = OrphanRunRows()
            var runs = Set<[Int64]>()
            for rowTable in Self.runRowTables {
                let sql = """
                    SELECT location_id, run_id, count(*) FROM \(rowTable.name) x
                    WHERE NOT EXISTS (SELECT 1 FROM forecast_runs r WHERE r.location_id = x.location_id AND r.id = x.run_id)
                    GROUP BY location_id, run_id
                    """
                let rows = try db.rows(sql) { (location: $0.int64(0), run: $0.int64(1), count: Int($0.int64(2))) }
                for row in rows {
                    runs.insert([row.location, row.run])
                    if rowTable.hourly { found.hourlyRows += row.count } else { found.dailyRows += row.count }
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
