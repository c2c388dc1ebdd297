import WxCore
import WxStore

/// An ensemble model's scores at one location against one observation source, by lead bucket.
public struct EnsembleVerification: Sendable {
    public var model: String
    public var variable: String
    public var source: String
    /// Runs read.
    public var runs: Int
    /// Scores per lead bucket (buckets without a case are left out), in lead order.
    public var byLead: [(bucket: LeadBucket, scores: EnsembleScores)]
    /// Every case together.
    public var total: EnsembleScores
    /// The event scores (fair Brier, reliability) per threshold, every lead together.
    public var events: [EnsembleEventScores]
}

/// Scores an ensemble model's stored members against observations (issue 31).
///
/// The scores are computed from the members when asked: the sums add up (``EnsembleScores``), but they
/// are not yet kept at write time, so this reads every member of every run in the window.
public enum EnsembleVerify {
    public static func run(
        store: any EnsembleStore, location: Location, model: String, variable: Variable, source: String,
        from: Int64 = .min, to: Int64 = .max, thresholds: [Double] = []
    ) throws -> EnsembleVerification {
        var buckets: [LeadBucket: EnsembleScores] = [:]
        var total = EnsembleScores()
        var events = thresholds.map { EnsembleEventScores(threshold: $0) }
        let runs = try store.ensembleRuns(locationID: location.id, model: model)
        var read = 0
        for run in runs {
            let last = run.firstValidTime + Int64(run.hourCount - 1) * 3600
            guard last >= from, run.firstValidTime <= to,
                let members = try store.ensembleMembers(runID: run.id, variable: variable.name)
            else { continue }
            read += 1
            let observed = try store.observations(
                of: variable, locationID: location.id, source: source, from: max(from, run.firstValidTime),
                to: min(to, last))
            for (hour, row) in members.enumerated() {
                let time = run.firstValidTime + Int64(hour) * 3600
                // Hours before the run started are its stitched past, not a forecast.
                guard time >= run.issuedAt, let y = observed[time],
                    let bucket = LeadBuckets.bucket(forLeadHours: Double(time - run.issuedAt) / 3600)
                else { continue }
                let values = row.map { Double($0) }
                buckets[bucket, default: EnsembleScores()].add(members: values, observed: y)
                total.add(members: values, observed: y)
                for i in events.indices { events[i].add(members: values, observed: y) }
            }
        }
        return EnsembleVerification(
            model: model, variable: variable.name, source: source, runs: read,
            byLead: buckets.keys.sorted().map { ($0, buckets[$0]!) }, total: total, events: events)
    }
}
