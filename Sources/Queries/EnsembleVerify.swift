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

/// Scores an ensemble model against observations (issue 31).
///
/// The scores come from the sums kept at write time (one group per local day and lead bucket), so
/// this reads days, not members, and still counts the runs whose members prune deleted. A day the
/// window cuts, and a threshold whose event sums are not kept, are scored from the stored members.
public enum EnsembleVerify {
    public static func run(
        store: any EnsembleStore, location: Location, model: String, variable: Variable, source: String,
        from: Int64 = .min, to: Int64 = .max, thresholds: [Double] = []
    ) throws -> EnsembleVerification {
        let days = try daily(
            store: store, location: location, model: model, variable: variable, source: source, from: from, to: to,
            thresholds: thresholds)
        return days.verification
    }

    /// The scores with their per-day groups (for the day-block bootstrap), or nil groups when the
    /// store keeps no sums yet (then every score is from the members).
    public static func daily(
        store: any EnsembleStore, location: Location, model: String, variable: Variable, source: String,
        from: Int64 = .min, to: Int64 = .max, thresholds: [Double] = []
    ) throws -> (verification: EnsembleVerification, days: [EnsembleDayGroup]?) {
        guard
            let groups = try store.ensembleGroups(
                locationID: location.id, model: model, variable: variable.name, source: source, from: from, to: to)
        else {
            let all = try fromMembers(
                store: store, location: location, model: model, variable: variable, source: source, from: from,
                to: to, thresholds: thresholds)
            return (all, nil)
        }
        let kept = EnsembleGroupSums.thresholds(for: variable.name)
        var buckets: [LeadBucket: EnsembleScores] = [:]
        var total = EnsembleScores()
        var events = thresholds.map { EnsembleEventScores(threshold: $0) }
        var whole: [EnsembleDayGroup] = []
        var cut: [(from: Int64, to: Int64)] = []
        for group in groups {
            guard group.dayStart >= from, group.dayEnd - 1 <= to else {
                let span = (max(from, group.dayStart), min(to, group.dayEnd - 1))
                if !cut.contains(where: { $0 == span }) { cut.append(span) }
                continue
            }
            whole.append(group)
            buckets[group.bucket, default: EnsembleScores()].merge(group.sums.scores)
            total.merge(group.sums.scores)
            for i in events.indices {
                if let k = kept.firstIndex(of: events[i].threshold) { events[i].merge(group.sums.events[k]) }
            }
        }
        // Event sums at other thresholds than the kept ones: from the members of every whole day.
        let unkept = thresholds.filter { !kept.contains($0) }
        if !unkept.isEmpty {
            // Day by day in time order: a Set's order differs from one Set to the next, and so would
            // the last digits of the sums (the same command printed different Brier scores).
            for day in Set(whole.map { [$0.dayStart, $0.dayEnd] }).sorted(by: { $0[0] < $1[0] }) {
                let part = try fromMembers(
                    store: store, location: location, model: model, variable: variable, source: source,
                    from: day[0], to: day[1] - 1, thresholds: unkept)
                for e in part.events {
                    if let i = events.firstIndex(where: { $0.threshold == e.threshold }) { events[i].merge(e) }
                }
            }
        }
        for span in cut {
            let part = try fromMembers(
                store: store, location: location, model: model, variable: variable, source: source, from: span.from,
                to: span.to, thresholds: thresholds)
            for (bucket, scores) in part.byLead { buckets[bucket, default: EnsembleScores()].merge(scores) }
            total.merge(part.total)
            for (i, e) in part.events.enumerated() { events[i].merge(e) }
        }
        let runs = try store.ensembleRuns(locationID: location.id, model: model).filter { run in
            let last = run.firstValidTime + Int64(run.hourCount - 1) * 3600
            return last >= from && run.firstValidTime <= to
        }.count
        let verification = EnsembleVerification(
            model: model, variable: variable.name, source: source, runs: runs,
            byLead: buckets.keys.sorted().map { ($0, buckets[$0]!) }, total: total, events: events)
        return (verification, cut.isEmpty ? whole : nil)
    }

    /// The same scores computed from every stored member in the window (what the kept sums must
    /// equal while no run is pruned).
    public static func fromMembers(
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
                let members = try store.ensembleMembers(
                    locationID: run.locationID, runID: run.id, variable: variable.name)
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
