import WxCore
import WxSQLite
import WxStore

/// What `wxdb prune` did.
public struct PruneResult: Sendable, Equatable {
    public var runs = 0
    public var hourlyRows = 0
    public var dailyRows = 0
    public var summaryRows = 0
}

/// Removes the hourly and daily rows of old runs after folding their forecast/observation pairs
/// into `verification_summaries`, a batch of runs per transaction, so at every moment a run is
/// either in full or summarised, never both and never lost.
public enum Pruner {
    /// The threshold (mm) at which categorical and Brier sums are kept.
    public static let threshold = 0.1

    /// Variables whose pairs are summarised: every kept quantity (weather codes are categories).
    static let variables = Variables.hourly.filter { $0.quantity != .code }

    /// Prunes runs issued before `now - keepDays` days, except the latest run of each location and
    /// model, whatever its age (the next fetch continues or repeats it, so it must keep its rows).
    public static func prune(_ store: Store, keepDays: Int, now: Int64, batchSize: Int = 20) throws -> PruneResult {
        let cutoff = now - Int64(keepDays) * 86400
        var result = PruneResult()
        while true {
            let done = try store.db.transaction { () -> Bool in
                let runs = try store.prunableRuns(before: cutoff, limit: batchSize)
                if runs.isEmpty { return true }
                var sums: [SummaryKey: VerifyRow] = [:]
                for run in runs { try summarise(store, runID: run.id, timezone: run.timezone, into: &sums) }
                result.summaryRows += try write(store, sums)
                for run in runs {
                    try store.db.run("DELETE FROM hourly_forecasts WHERE run_id = ?", [.integer(run.id)])
                    result.hourlyRows += store.db.changes
                    try store.db.run("DELETE FROM daily_forecasts WHERE run_id = ?", [.integer(run.id)])
                    result.dailyRows += store.db.changes
                    try store.db.run("UPDATE forecast_runs SET pruned_at = ? WHERE id = ?", [.integer(now), .integer(run.id)])
                }
                result.runs += runs.count
                return false
            }
            if done { break }
        }
        return result
    }

    /// What `prune` would remove, changing nothing (`wxdb prune --dry-run`).
    public static func plan(_ store: Store, keepDays: Int, now: Int64) throws -> PruneResult {
        let totals = try store.prunableTotals(before: now - Int64(keepDays) * 86400)
        return PruneResult(runs: totals.runs, hourlyRows: totals.hours, dailyRows: totals.days)
    }

    struct SummaryKey: Hashable {
        var location: Int64
        var model: String
        var source: String
        var variable: String
        var leadFrom: Int
        var leadTo: Int
        var validDate: String
    }

    static let pairSQL = "SELECT location_id, model, source, issued_at, valid_time, "
        + variables.map { "forecast_\($0.name), observed_\($0.name)" }.joined(separator: ", ")
        + ", observed_precipitation FROM forecast_observation_pairs WHERE run_id = ?"

    /// Adds every pair of one run, per variable and source, exactly as `query verify` would. Days
    /// are the location's local days, so `--from/--to` given as dates select whole summaries.
    static func summarise(_ store: Store, runID: Int64, timezone: String, into sums: inout [SummaryKey: VerifyRow]) throws {
        let statement = try store.db.cachedStatement(pairSQL)
        try statement.bind([.integer(runID)])
        defer { statement.reset() }
        let precipitationColumn = 5 + variables.count * 2
        while let row = try statement.step() {
            let issued = row.int64(3)
            let valid = row.int64(4)
            guard let bucket = LeadBuckets.bucket(forLeadHours: Double(valid - issued) / 3600) else { continue }
            let date = ZoneTime.date(of: valid, timezone: timezone)
            for (index, variable) in variables.enumerated() {
                let forecastColumn = 5 + index * 2
                let observedColumn = variable.name == "precipitation_probability" ? precipitationColumn : forecastColumn + 1
                guard let forecast = row.optionalDouble(forecastColumn), let observed = row.optionalDouble(observedColumn) else { continue }
                let key = SummaryKey(location: row.int64(0), model: row.string(1), source: row.string(2), variable: variable.name,
                                     leadFrom: bucket.from, leadTo: bucket.to, validDate: date)
                var group = sums[key] ?? VerifyRow(model: nil, leadFromHours: bucket.from, leadToHours: bucket.to)
                VerifyQuery.add(&group, forecast: forecast, observed: observed, reference: nil, variable: variable,
                                units: .metric, threshold: threshold)
                sums[key] = group
            }
        }
    }

    static let upsertSQL = """
        INSERT INTO verification_summaries (location_id, model, source, variable, lead_from_h, lead_to_h, valid_date,
            n, sum_f, sum_o, sum_ff, sum_oo, sum_fo, sum_abs_err, sum_err, sum_err_sq,
            hits, false_alarms, misses, correct_negatives, brier_n, brier_sum, brier_events)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (location_id, source, variable, model, lead_from_h, valid_date) DO UPDATE SET
            n = n + excluded.n, sum_f = sum_f + excluded.sum_f, sum_o = sum_o + excluded.sum_o,
            sum_ff = sum_ff + excluded.sum_ff, sum_oo = sum_oo + excluded.sum_oo, sum_fo = sum_fo + excluded.sum_fo,
            sum_abs_err = sum_abs_err + excluded.sum_abs_err, sum_err = sum_err + excluded.sum_err,
            sum_err_sq = sum_err_sq + excluded.sum_err_sq,
            hits = hits + excluded.hits, false_alarms = false_alarms + excluded.false_alarms,
            misses = misses + excluded.misses, correct_negatives = correct_negatives + excluded.correct_negatives,
            brier_n = brier_n + excluded.brier_n, brier_sum = brier_sum + excluded.brier_sum,
            brier_events = brier_events + excluded.brier_events
        """

    static func write(_ store: Store, _ sums: [SummaryKey: VerifyRow]) throws -> Int {
        for (key, group) in sums {
            let s = group.scores
            let table = group.contingency
            let brier = group.brier
            try store.db.run(upsertSQL, [
                .integer(key.location), .text(key.model), .text(key.source), .text(key.variable),
                .integer(Int64(key.leadFrom)), .integer(Int64(key.leadTo)), .text(key.validDate),
                .integer(Int64(s.n)), .real(s.sumF), .real(s.sumO), .real(s.sumFF), .real(s.sumOO), .real(s.sumFO),
                .real(s.sumAbsErr), .real(s.sumErr), .real(s.sumErrSq),
                table.map { .integer(Int64($0.a)) } ?? .null, table.map { .integer(Int64($0.b)) } ?? .null,
                table.map { .integer(Int64($0.c)) } ?? .null, table.map { .integer(Int64($0.d)) } ?? .null,
                brier.map { .integer(Int64($0.n)) } ?? .null, brier.map { .real($0.sumSquaredError) } ?? .null,
                brier.map { .integer(Int64($0.occurrences)) } ?? .null,
            ])
        }
        return sums.count
    }
}
