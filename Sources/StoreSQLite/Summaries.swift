import WxCore
import WxSQLite
import WxStore

extension SQLiteStore {
    /// Prunes the next `limit` runs issued before `cutoff` (`prunableRuns`) in one transaction: the
    /// runs lose their hourly and daily rows and are marked pruned at `now`. Their pairs' sums are
    /// already in `verification_summaries` (kept at write time) and stay. Nil when no run is left.
    public func pruneBatch(issuedBefore cutoff: Int64, now: Int64, limit: Int) throws -> PruneBatch? {
        try db.transaction { () -> PruneBatch? in
            let runs = try prunableRuns(before: cutoff, limit: limit)
            if runs.isEmpty { return nil }
            var batch = PruneBatch(runs: runs.count)
            for run in runs {
                try db.run("DELETE FROM hourly_forecasts WHERE run_id = ?", [.integer(run.id)])
                batch.hourlyRows += db.changes
                try db.run("DELETE FROM daily_forecasts WHERE run_id = ?", [.integer(run.id)])
                batch.dailyRows += db.changes
                try db.run("UPDATE forecast_runs SET pruned_at = ? WHERE id = ?", [.integer(now), .integer(run.id)])
            }
            return batch
        }
    }

    static let summaryKeyColumns = [
        "location_id", "model", "source", "variable", "lead_from_h", "lead_to_h", "valid_date"
    ]
    /// The instants the key's date covered (migration 0006 added them after the sums).
    static let summarySpanColumns = ["valid_from", "valid_to"]

    /// Streams the stored summaries of one location, source and variable (of `model` when given);
    /// with `cutBy`, only those of the days the range cuts (a day that holds one of its bounds
    /// strictly inside).
    public func forEachSummary(
        locationID: Int64, source: String, variable: String, model: String?,
        cutBy range: (from: Int64, to: Int64)? = nil,
        _ visit: (StoredSummary) throws -> Void
    ) throws {
        let statement = try db.cachedStatement(Self.summariesSQL)
        try statement.bind([
            .integer(locationID), .text(source), .text(variable), model.sqlValue,
            range.map { .integer($0.from) } ?? .null,
            range.map { .integer($0.to) } ?? .null
        ])
        defer { statement.reset() }
        let count = SummarySums.columns.count
        while let row = try statement.step() {
            let values = (0..<count).map { row.optionalDouble(8 + $0) }
            let span = row.optionalInt64(4).flatMap { start in row.optionalInt64(5).map { (start: start, end: $0) } }
            try visit(
                StoredSummary(
                    model: row.string(0), leadFrom: row.int(1), leadTo: row.int(2), validDate: row.string(3),
                    span: span, firstValid: row.optionalInt64(6), lastValid: row.optionalInt64(7),
                    sums: SummarySums(values: values)))
        }
    }

    /// The stored summaries of one location, source and variable (of `model` when given) over the
    /// days wholly inside `[from, to)`, added up per model and lead bucket: what `query verify`
    /// reads. Summed here as the rows stream by, column by column into one accumulator per bucket
    /// (SQLite's sum() and its GROUP BY sorter took three times as long); a score is absent from a
    /// total only when every row lacks it, as merging the rows one by one gives.
    public func summaryTotals(
        locationID: Int64, source: String, variable: String, model: String?, from: Int64 = .min, to: Int64 = .max
    ) throws -> [SummaryTotal] {
        final class Total {
            let model: String
            let leadFrom: Int
            let leadTo: Int
            var first = Int64.max
            var last = Int64.min
            var sums: [Double]
            var present: [Bool]
            init(model: String, leadFrom: Int, leadTo: Int, columns: Int) {
                (self.model, self.leadFrom, self.leadTo) = (model, leadFrom, leadTo)
                sums = Array(repeating: 0, count: columns)
                present = Array(repeating: false, count: columns)
            }
        }
        let columns = SummarySums.columns.count
        let statement = try db.cachedStatement(Self.summaryRowsSQL)
        try statement.bind([
            .integer(locationID), .text(source), .text(variable), model.sqlValue, .integer(from), .integer(to)
        ])
        defer { statement.reset() }
        var order: [Total] = []
        // The rows come model by model (ORDER BY model follows the key), so one model's buckets
        // are looked up by lead alone.
        var lastModel = ""
        var byLead: [Int: Total] = [:]
        while let row = try statement.step() {
            let model = row.string(0)
            if model != lastModel {
                byLead = [:]
                lastModel = model
            }
            let leadFrom = row.int(1)
            let total: Total
            if let known = byLead[leadFrom] {
                total = known
            } else {
                total = Total(model: model, leadFrom: leadFrom, leadTo: row.int(2), columns: columns)
                byLead[leadFrom] = total
                order.append(total)
            }
            total.first = min(total.first, row.int64(3))
            total.last = max(total.last, row.int64(4))
            for column in 0..<columns where !row.isNull(5 + column) {
                total.sums[column] += row.double(5 + column)
                total.present[column] = true
            }
        }
        return order.map { total in
            SummaryTotal(
                model: total.model, leadFrom: total.leadFrom, leadTo: total.leadTo, firstValid: total.first,
                lastValid: total.last,
                sums: SummarySums(values: zip(total.sums, total.present).map { $1 ? $0 : nil }))
        }
    }

    /// The distinct local days (`valid_from`, `valid_to`) the kept sums of a location are on, per
    /// source and variable: after a change of zone, pruned runs' sums stay on the old zone's days.
    public func summaryDays(locationID: Int64) throws -> [(source: String, variable: String, from: Int64, to: Int64)] {
        try db.rows(
            """
            SELECT DISTINCT source, variable, valid_from, valid_to FROM verification_summaries
            WHERE location_id = ? ORDER BY source, variable, valid_from
            """, [.integer(locationID)]
        ) { (source: $0.string(0), variable: $0.string(1), from: $0.int64(2), to: $0.int64(3)) }
    }

    static let summaryFilter =
        " FROM verification_summaries WHERE location_id = ?1 AND source = ?2 AND variable = ?3"
        + " AND (?4 IS NULL OR model = ?4)"
    static let summariesSQL =
        "SELECT model, lead_from_h, lead_to_h, valid_date, valid_from, valid_to, first_valid_time, last_valid_time, "
        + SummarySums.columns.map(\.name).joined(separator: ", ") + summaryFilter
        + " AND (?5 IS NULL OR valid_from < ?5 AND valid_to > ?5 OR valid_from < ?6 AND valid_to > ?6)"
    static let summaryRowsSQL =
        "SELECT model, lead_from_h, lead_to_h, coalesce(first_valid_time, valid_from), "
        + "coalesce(last_valid_time, valid_to - 3600), " + SummarySums.columns.map(\.name).joined(separator: ", ")
        + summaryFilter + " AND valid_from >= ?5 AND valid_to <= ?6 ORDER BY model"
}
