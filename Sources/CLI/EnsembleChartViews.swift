import WxCharts
import WxCore
import WxQueries
import WxStore

/// The four ensemble charts of `wxdb report` (issue 31), drawn from `query ensemble`'s results
/// (``EnsembleVerification``) and, for the deterministic MAE beside the CRPS, `query verify --by model`.
enum EnsembleChartViews {
    /// CRPS of the ensemble by lead bucket beside each deterministic model's MAE: a deterministic
    /// forecast's CRPS is its absolute error, so the lines compare like with like.
    static func crps(_ result: EnsembleVerification, deterministic: VerifyResult?, units: UnitSystem, id: String)
        -> LineChart
    {
        let variable = Variables.hourlyVariable(named: result.variable)!
        let unit = units.unit(variable.quantity)
        let rows = deterministic?.rows ?? []
        let axis = ChartViews.LeadAxis(
            result.byLead.map(\.bucket) + rows.map { LeadBucket(from: $0.leadFromHours, to: $0.leadToHours) })
        let position = axis.position
        let crps = result.byLead.compactMap { bucket, scores -> ChartPoint? in
            guard let value = scores.crps.map({ units.convertDifference($0, variable.quantity) }) else { return nil }
            return ChartPoint(
                x: position[bucket]!, y: value, n: scores.n,
                note: "lead \(Query.Verify.leadLabel(bucket.from, bucket.to)), CRPS \(ChartViews.number(value)) \(unit)"
            )
        }
        var series = [ChartSeries(name: "\(result.model) CRPS", points: crps, colour: .palette(0))]
        var models: [String] = []
        for row in rows { if let model = row.model, !models.contains(model) { models.append(model) } }
        for (index, model) in models.enumerated() {
            let points = rows.filter { $0.model == model }.compactMap { row -> ChartPoint? in
                guard let mae = row.scores.mae else { return nil }
                return ChartPoint(
                    x: position[LeadBucket(from: row.leadFromHours, to: row.leadToHours)]!, y: mae,
                    note:
                        "lead \(Query.Verify.leadLabel(row.leadFromHours, row.leadToHours)), MAE \(ChartViews.number(mae)) \(unit) (n=\(row.scores.n))"
                )
            }
            series.append(ChartSeries(name: "\(model) MAE", points: points, colour: .palette(index + 1), dash: 2))
        }
        var chart = LineChart(
            id: id,
            title: "\(result.variable): ensemble CRPS and deterministic MAE by lead time",
            description:
                "CRPS (empirical CDF of the members) of \(result.model) by lead time bucket against \(result.source), beside the MAE of each deterministic model (dotted; a single forecast's CRPS is its absolute error, lower is better); the numbers under the axis are the ensemble's cases behind each point. The deterministic models are scored on their own pairs, not only on the hours the ensemble has.",
            xTitle: "lead time", yTitle: "CRPS or MAE (\(unit))", series: series)
        axis.frame(&chart)
        chart.nonNegative = true
        return chart
    }

    /// The ensemble spread against the RMSE of the ensemble mean by lead: for a reliable ensemble
    /// the two lines lie together (spread below RMSE is under-dispersion).
    static func spreadSkill(_ result: EnsembleVerification, units: UnitSystem, id: String) -> LineChart {
        let variable = Variables.hourlyVariable(named: result.variable)!
        let unit = units.unit(variable.quantity)
        let axis = ChartViews.LeadAxis(result.byLead.map(\.bucket))
        let labels = axis.labels
        func points(_ value: (EnsembleScores) -> Double?, _ name: String, withN: Bool) -> [ChartPoint] {
            result.byLead.enumerated().compactMap { index, entry in
                guard let raw = value(entry.scores) else { return nil }
                let v = units.convertDifference(raw, variable.quantity)
                return ChartPoint(
                    x: Double(index), y: v, n: withN ? entry.scores.n : nil,
                    note: "lead \(labels[index]), \(name) \(ChartViews.number(v)) \(unit)")
            }
        }
        var chart = LineChart(
            id: id, title: "\(result.variable): ensemble spread and RMSE of the ensemble mean",
            description:
                "The ensemble spread (root of the mean member variance) and the RMSE of the ensemble mean against \(result.source), by lead time bucket; for a reliable ensemble they are about equal, a spread below the RMSE is an under-dispersive (over-confident) ensemble. The numbers under the axis are the cases behind each point.",
            xTitle: "lead time", yTitle: "\(unit)",
            series: [
                ChartSeries(name: "spread", points: points({ $0.spread }, "spread", withN: true), colour: .palette(0)),
                ChartSeries(
                    name: "RMSE of the mean", points: points({ $0.meanRMSE }, "RMSE of the mean", withN: false),
                    colour: .palette(1), dash: 1)
            ])
        axis.frame(&chart)
        chart.nonNegative = true
        return chart
    }

    /// The rank histogram as relative frequencies, with the flat line 1/(M+1) a reliable ensemble follows.
    static func rankHistogram(_ result: EnsembleVerification, id: String) -> LineChart {
        let counts = result.total.rankCounts
        let total = counts.reduce(0, +)
        let points = counts.enumerated().map { rank, count in
            ChartPoint(
                x: Double(rank + 1), y: total > 0 ? count / total : 0,
                note: "rank \(rank + 1): \(ChartViews.number(count)) of \(ChartViews.number(total)) cases")
        }
        var flatness = ""
        if let flat = result.total.rankFlatness {
            flatness =
                String(
                    printf: " Chi-square %.1f on %d degrees of freedom, p = %.3g", flat.chiSquare, flat.degrees,
                    flat.pValue) + (flat.pValue < 0.01 ? " (not flat at 1%)." : " (flat at 1%).")
        }
        var chart = LineChart(
            id: id,
            title: "\(result.variable): rank histogram of \(result.model) (\(max(counts.count - 1, 0)) members)",
            description:
                "How often the observation (\(result.source)) fell at each rank among the sorted members (ties split equally, cases with a missing member left out: \(result.total.rankLeftOut)); a reliable ensemble is flat at the grey line, a U shape is under-dispersive, a hump over-dispersive, a slope biased."
                + flatness,
            xTitle: "rank of the observation among the members", yTitle: "relative frequency",
            series: [ChartSeries(name: "observed rank", points: points, colour: .palette(0))])
        if !counts.isEmpty {
            chart.referenceY = [1 / Double(counts.count)]
            chart.xDomain = 1...Double(max(counts.count, 2))
        }
        chart.yDomain = 0...max(2 / Double(max(counts.count, 1)), (points.map(\.y).max() ?? 0) * 1.1)
        return chart
    }

    /// Member fractions forecasting the event against how often it happened, in ten bins.
    static func reliability(_ events: EnsembleEventScores, _ result: EnsembleVerification, id: String) -> LineChart {
        // Thresholds are in stored (metric) units, as `query ensemble --threshold` takes them.
        let stored = Variables.hourlyVariable(named: result.variable).map { UnitSystem.metric.unit($0.quantity) } ?? ""
        let points = events.reliability.map { row in
            ChartPoint(
                x: row.meanForecast * 100, y: row.observedFrequency * 100, n: row.cases,
                note:
                    "members forecasting \(row.bin * 10)–\(row.bin * 10 + 10) % (mean \(ChartViews.number(row.meanForecast * 100)) %), observed \(ChartViews.number(row.observedFrequency * 100)) %"
            )
        }
        var chart = LineChart(
            id: id,
            title:
                "\(result.variable) ≥ \(formatNumber(events.threshold, places: 3)) \(stored): reliability of \(result.model)",
            description:
                "The fraction of members forecasting the event, in bins of 10 %, against how often \(result.source) observed it; points on the diagonal are reliable, the numbers under the axis are the cases in each bin."
                + String(printf: " Fair Brier score %.4f over %d cases.", events.fairBrier ?? .nan, events.n),
            xTitle: "members forecasting the event (%)", yTitle: "observed frequency (%)",
            series: [ChartSeries(name: result.model, points: points, colour: .palette(0))])
        ChartViews.reliabilityFrame(&chart)
        return chart
    }
}
