import WxCore

/// What `wxdb prune` did.
public struct PruneResult: Sendable, Equatable {
    public var runs = 0
    public var hourlyRows = 0
    public var dailyRows = 0
    /// Ensemble runs whose members were deleted (their sums are kept).
    public var ensembleRuns = 0
}

/// Removes the hourly and daily rows of old runs, a batch of runs per transaction. Their
/// forecast/observation pairs' sums are already in `verification_summaries` (kept as the rows were
/// stored), so `query verify` answers as before; prune only deletes.
public enum Pruner {
    /// The threshold (mm) at which categorical and Brier sums are kept.
    public static let threshold = SummedPairs.threshold

    /// A prune that failed after some batches were committed: those stay pruned, and a user must
    /// hear that rather than "nothing was done".
    public struct Failure: Error {
        public var done: PruneResult
        public var underlying: Error
    }

    /// Prunes runs issued before `now - keepDays` days, except the latest run of each location and
    /// model, whatever its age (the next fetch continues or repeats it, so it must keep its rows).
    /// A failure after the first batch throws `Failure` with what the committed batches did.
    public static func prune(_ store: any Store, keepDays: Int, now: Int64, batchSize: Int = 20) throws -> PruneResult {
        var result = PruneResult()
        do {
            let cutoff = now - Int64(keepDays) * 86400
            while let batch = try store.pruneBatch(issuedBefore: cutoff, now: now, limit: batchSize) {
                // Counted only once the batch is committed: a failed batch is rolled back whole.
                result.runs += batch.runs
                result.hourlyRows += batch.hourlyRows
                result.dailyRows += batch.dailyRows
            }
            result.ensembleRuns = try store.pruneEnsembleMembers(issuedBefore: cutoff)
        } catch {
            if result.runs > 0 { throw Failure(done: result, underlying: error) }
            throw error
        }
        return result
    }

    /// What `prune` would remove, changing nothing (`wxdb prune --dry-run`).
    public static func plan(_ store: any Store, keepDays: Int, now: Int64) throws -> PruneResult {
        let totals = try store.prunableTotals(before: now - Int64(keepDays) * 86400)
        var result = PruneResult(runs: totals.runs, hourlyRows: totals.hours, dailyRows: totals.days)
        result.ensembleRuns = try store.prunableEnsembleRuns(issuedBefore: now - Int64(keepDays) * 86400)
        return result
    }
}
