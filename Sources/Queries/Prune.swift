import WxCore
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

    /// Variables whose pairs are summarised: every one that is scored (weather codes are categories).
    static let variables = Variables.hourly.filter { $0.verification != .categorical }

    /// A prune that failed after some batches were committed: those stay pruned, and a user must
    /// hear that rather than "nothing was done".
    public struct Failure: Error {
        public var done: PruneResult
        public var underlying: Error
    }

    /// Prunes runs issued before `now - keepDays` days, except the latest run of each location and
    /// model, whatever its age (the next fetch continues or repeats it, so it must keep its rows).
    /// A failure after the first batch throws `Failure` with what the committed batches did.
    public static func prune(_ store: Store, keepDays: Int, now: Int64, batchSize: Int = 20) throws -> PruneResult {
        var result = PruneResult()
        do {
            try prune(store, keepDays: keepDays, now: now, batchSize: batchSize, into: &result)
        } catch {
            if result.runs > 0 { throw Failure(done: result, underlying: error) }
            throw error
        }
        return result
    }

    static func prune(_ store: Store, keepDays: Int, now: Int64, batchSize: Int, into result: inout PruneResult) throws
    {
        let cutoff = now - Int64(keepDays) * 86400
        while let batch = try store.pruneBatch(
            issuedBefore: cutoff, now: now, limit: batchSize,
            summarise: { runs in
                var sums: [SummaryKey: VerifyRow] = [:]
                for run in runs { try summarise(store, runID: run.id, timezone: run.timezone, into: &sums) }
                return sums.mapValues(\.sums)
            })
        {
            // Counted only once the batch is committed: a failed batch is rolled back whole.
            result.runs += batch.runs
            result.hourlyRows += batch.hourlyRows
            result.dailyRows += batch.dailyRows
            result.summaryRows += batch.summaryRows
        }
    }

    /// What `prune` would remove, changing nothing (`wxdb prune --dry-run`).
    public static func plan(_ store: Store, keepDays: Int, now: Int64) throws -> PruneResult {
        let totals = try store.prunableTotals(before: now - Int64(keepDays) * 86400)
        return PruneResult(runs: totals.runs, hourlyRows: totals.hours, dailyRows: totals.days)
    }

    /// Adds every pair of one run, per variable and source, exactly as `query verify` would. Days
    /// are the location's local days, so `--from/--to` given as dates select whole summaries.
    static func summarise(_ store: Store, runID: Int64, timezone: String, into sums: inout [SummaryKey: VerifyRow])
        throws
    {
        // Each variable's forecast beside the observation it is scored against (a probability's is
        // another variable's).
        try store.forEachPair(ofRun: runID, columns: variables.map { ($0, $0.observedVariable) }) { row in
            let issued = row.int64(3)
            let valid = row.int64(4)
            guard let bucket = LeadBuckets.bucket(forLeadHours: Double(valid - issued) / 3600) else { return }
            let date = ZoneTime.date(of: valid, timezone: timezone)
            let span = ZoneTime.span(ofDate: date, timezone: timezone) ?? (valid, valid + 3600)
            for (index, variable) in variables.enumerated() {
                let forecastColumn = 5 + index * 2
                guard let forecast = row.optionalDouble(forecastColumn),
                    let observed = row.optionalDouble(forecastColumn + 1)
                else { continue }
                let key = SummaryKey(
                    location: row.int64(0), model: row.string(1), source: row.string(2), variable: variable.name,
                    leadFrom: bucket.from, leadTo: bucket.to, validDate: date,
                    validFrom: span.start, validTo: span.end)
                var group = sums[key] ?? VerifyRow(model: nil, leadFromHours: bucket.from, leadToHours: bucket.to)
                VerifyQuery.add(
                    &group, forecast: forecast, observed: observed, reference: nil, variable: variable,
                    units: .metric, threshold: threshold)
                sums[key] = group
            }
        }
    }
}
