import WxCharts
import WxCore
import WxQueries
import WxStore

/// The charts of `wxdb report` and of `query verify|trend|forecast --format svg`, drawn from the same
/// query results the tables and JSON print (never recomputed here).
enum ChartViews {
    /// Most points a line draws; longer series are averaged in consecutive groups (n adds up).
    static let maxPoints = 400

    /// MAE (solid) and bias (dashed) by lead bucket, one colour per model (or one for all models);
    /// a probability shows its Brier score instead. The n row counts pairs per bucket.
    static func verify(_ result: VerifyResult, id: String) -> LineChart {
        let variable = result.variable
        let unit = variable.isProbability ? "%" : result.options.units.unit(variable.quantity)
        let axis = LeadAxis(result.rows.map { LeadBucket(from: $0.leadFromHours, to: $0.leadToHours) })
        let position = axis.position
        var models: [String?] = []
        for row in result.rows where !models.contains(row.model) { models.append(row.model) }
        func band(_ rows: [VerifyRow], _ score: IntervalScore) -> [ChartBand] {
            rows.compactMap { row in
                row.intervals?.scores[score].map {
                    ChartBand(
                        x: position[LeadBucket(from: row.leadFromHours, to: row.leadToHours)]!, low: $0.low,
                        high: $0.high)
                }
            }
        }
        var series: [ChartSeries] = []
        for (index, model) in models.enumerated() {
            let rows = result.rows.filter { $0.model == model }
            let name = model ?? "all models"
            func points(_ value: (VerifyRow) -> Double?, withN: Bool) -> [ChartPoint] {
                rows.compactMap { row in
                    guard let v = value(row) else { return nil }
                    let bucket = LeadBucket(from: row.leadFromHours, to: row.leadToHours)
                    return ChartPoint(
                        x: position[bucket]!, y: v, n: withN ? row.scores.n : nil,
                        note: "lead \(Query.Verify.leadLabel(row.leadFromHours, row.leadToHours)), \(number(v)) \(unit)"
                            + (withN ? "" : " (n=\(row.scores.n))"))
                }
            }
            if variable.isProbability {
                var brier = ChartSeries(
                    name: "\(name) Brier", points: points({ $0.brier?.score }, withN: true), colour: .palette(index))
                brier.band = band(rows, .brier)
                series.append(brier)
            } else {
                var mae = ChartSeries(
                    name: "\(name) MAE", points: points({ $0.scores.mae }, withN: true), colour: .palette(index))
                mae.band = band(rows, .mae)
                series.append(mae)
                series.append(
                    ChartSeries(
                        name: "\(name) bias", points: points({ $0.scores.bias }, withN: false), colour: .palette(index),
                        dash: 1))
            }
        }
        let what = variable.isProbability ? "Brier score" : "MAE and bias"
        var chart = LineChart(
            id: id, title: "\(variable.name): \(what) by lead time (against \(result.source))",
            description:
                "\(what) of \(variable.name) forecasts for \(result.location) by lead time bucket, one colour per model; the numbers under the axis are the pairs behind each point\(result.rows.contains { $0.intervals != nil } ? "; the shaded bands are 95% intervals of the \(variable.isProbability ? "Brier score" : "MAE") (block bootstrap over valid days)" : "").",
            xTitle: "lead time", yTitle: variable.isProbability ? "Brier score (0 best)" : "error (\(unit))",
            series: series)
        axis.frame(&chart)
        if !variable.isProbability { chart.referenceY = [0] }
        return chart
    }

    /// POD, FAR, CSI and ETS by lead bucket.
    static func categorical(_ result: VerifyResult, id: String) -> LineChart? {
        let rows = result.rows.filter { $0.contingency != nil }
        guard !rows.isEmpty else { return nil }
        let labels = rows.map { Query.Verify.leadLabel($0.leadFromHours, $0.leadToHours) }
        let scores: [(String, (Contingency) -> Double?)] = [
            ("POD", { $0.pod }), ("FAR", { $0.far }), ("CSI", { $0.csi }), ("ETS", { $0.ets })
        ]
        let series = scores.enumerated().map { index, score in
            ChartSeries(
                name: score.0,
                points: rows.enumerated().compactMap { position, row in
                    guard let t = row.contingency, let value = score.1(t) else { return nil }
                    return ChartPoint(
                        x: Double(position), y: value, n: index == 0 ? t.n : nil,
                        note: "lead \(labels[position]), \(number(value))" + (index == 0 ? "" : " (n=\(t.n))"))
                }, colour: .palette(index), dash: index % 4)
        }
        var chart = LineChart(
            id: id,
            title:
                "\(result.variable.name) ≥ \(formatNumber(result.options.thresholdMillimetres, places: 3)) mm: POD, FAR, CSI and ETS by lead time",
            description:
                "Yes/no scores of the precipitation event by lead time bucket (a bucket in which the event was neither forecast nor observed has no score); the numbers under the axis are the pairs behind each point.",
            xTitle: "lead time", yTitle: "score (1 best, FAR 0 best)", series: series)
        chart.xAxis = .categories(rows.indices.map(Double.init), labels)
        chart.nRow = true
        chart.yDomain = min(0, series.flatMap(\.points).map(\.y).min() ?? 0)...1
        chart.referenceY = [0]
        return chart
    }

    /// Observed against the forecast issued each lead ahead, over valid time.
    static func trend(_ results: [TrendResult], location: Location, id: String) -> LineChart? {
        guard let first = results.first else { return nil }
        let unit = first.units.unit(first.variable.quantity)
        let daily = first.every == .day
        let totals = first.variable.quantity == .precipitation
        // Markers (sized by the hours behind them) while they stay apart; a longer series is a line.
        let markers = daily && first.points.count <= 62
        let tip = { (p: TrendPoint) in
            p.date.map { "day \($0)" } ?? TimeInput.local(p.time, timezone: location.timezone)
        }
        var series = [
            ChartSeries(
                name: "observed (\(first.source))",
                points: downsample(
                    first.points.map { p in
                        ChartPoint(
                            x: Double(p.time), y: p.observed, n: p.hours,
                            note: "\(tip(p)): \(number(p.observed)) \(unit)")
                    }), colour: .observed, markers: markers, maxGap: daily ? 1.5 * 86400 : 3 * 3600)
        ]
        let floor = nonNegative(first.variable) ? 0 : -Double.infinity
        for (index, result) in results.enumerated() {
            var forecast = ChartSeries(
                name: "\(result.model) issued \(formatNumber(result.leadHours, places: 1)) h ahead",
                points: downsample(
                    result.points.map { p in
                        ChartPoint(
                            x: Double(p.time), y: p.forecast, n: p.hours,
                            note: "\(tip(p)): \(number(p.forecast)) \(unit)"
                                + (p.errorInterval.map {
                                    " (error \(number(p.error)), interval \(number($0.low)) to \(number($0.high)))"
                                } ?? ""))
                    }), colour: .palette(index), dash: index % 4, markers: markers,
                maxGap: daily ? 1.5 * 86400 : 3 * 3600)
            // Where the day's mean forecast may lie given the noise of its hours: the observation plus
            // the interval of the day's error. The observed line outside it: an error beyond the noise.
            forecast.band = downsample(
                result.points.compactMap { p in
                    p.errorInterval.map {
                        ChartBand(x: Double(p.time), low: max(floor, p.observed + $0.low), high: p.observed + $0.high)
                    }
                })
            series.append(forecast)
        }
        let banded = series.contains { !$0.band.isEmpty }
        let level = Query.Trend.percentText(first.confidence ?? 0.95)
        let startOffset = ZoneTime.offset(at: first.points.first?.time ?? 0, timezone: location.timezone)
        var chart = LineChart(
            id: id,
            title:
                "\(first.variable.name): observed and forecast over time (\(daily ? "daily \(totals ? "totals" : "means")" : "hourly"))",
            description:
                "Observed \(first.variable.name) at \(location.name) beside the forecast issued a fixed lead ahead; \(daily ? "each point is the \(totals ? "total" : "mean") of a local day's hours (n = \(hoursRange(results)) hours a day)\(markers ? ", marker area the hours behind it" : "")" : "each point is one hour (n=1)")\(banded ? "; the shaded band around a forecast line is the \(level)% interval of the day's mean forecast (the observation plus the interval of the day's error, from its hours): where the observed line leaves it, that day's error is beyond the noise" : "").",
            xTitle: "valid time (\(Query.zoneLabel(location)))", yTitle: "\(first.variable.name) (\(unit))",
            series: series)
        chart.xAxis = .time(offset: startOffset)
        chart.sizeByN = markers
        chart.nonNegative = nonNegative(first.variable)
        return chart
    }

    /// Each run's forecast for one hour against its lead time, with the observation.
    static func convergence(_ history: ForecastHistory, location: Location, id: String) -> LineChart {
        let unit = history.units.unit(history.variable.quantity)
        var models: [String] = []
        for entry in history.entries where !models.contains(entry.model) { models.append(entry.model) }
        var series = models.enumerated().map { index, model in
            ChartSeries(
                name: model,
                points: downsample(
                    history.entries.filter { $0.model == model }.compactMap { e in
                        e.value.map { value in
                            ChartPoint(
                                x: e.leadHours, y: value, n: 1,
                                note:
                                    "issued \(TimeInput.local(e.issuedAt, timezone: location.timezone)), lead \(formatNumber(e.leadHours, places: 1)) h: \(number(value)) \(unit)"
                            )
                        }
                    }.sorted { $0.x > $1.x }), colour: .palette(index), dash: index % 4, maxGap: 24)
        }
        let leads = history.entries.map(\.leadHours)
        if let observed = history.observed, let source = history.observedSource {
            series.append(
                ChartSeries(
                    name: "observed (\(source)): \(number(observed)) \(unit)",
                    points: [
                        ChartPoint(x: leads.max() ?? 1, y: observed),
                        ChartPoint(x: leads.min() ?? 0, y: observed)
                    ], colour: .observed, dash: 1, markers: false))
        }
        let downsampled = series.contains { s in s.points.contains { ($0.n ?? 1) > 1 } }
        var chart = LineChart(
            id: id,
            title:
                "\(history.variable.name) for \(TimeInput.local(history.validTime, timezone: location.timezone)) (\(Query.zoneLabel(location))): run after run",
            description:
                "Every stored run's forecast of \(history.variable.name) for one hour against how far ahead it was issued; \(downsampled ? "neighbouring runs averaged, marker area the runs behind each point" : "each point is one run (n=1)").",
            xTitle: "lead time (hours before the valid time)", yTitle: "\(history.variable.name) (\(unit))",
            series: series)
        chart.reversedX = true
        chart.nonNegative = nonNegative(history.variable)
        chart.sizeByN = downsampled
        return chart
    }

    /// Forecast probability against how often the event happened, with the counts.
    static func reliability(_ reliability: Reliability, id: String) -> LineChart {
        let points = reliability.bins.map { bin in
            ChartPoint(
                x: bin.meanForecast, y: bin.observedFrequency, n: bin.n,
                note:
                    "forecast \(bin.from)–\(bin.to) % (mean \(number(bin.meanForecast)) %), observed \(number(bin.observedFrequency)) %"
            )
        }
        var chart = LineChart(
            id: id,
            title:
                "\(reliability.variable.name): reliability (event: \(reliability.variable.observedVariable.name) ≥ \(formatNumber(reliability.thresholdMillimetres, places: 3)) mm, \(reliability.source))",
            description:
                "Forecast probability bins of 10 % against how often the event was observed after them; points on the diagonal are reliable, the numbers under the axis are the forecasts in each bin."
                + (reliability.prunedRuns > 0
                    ? " Only runs still stored are binned: \(reliability.prunedRuns) pruned run(s) kept only their sums, so they count in the scores beside this chart but not here."
                    : ""),
            xTitle: "forecast probability (%)", yTitle: "observed frequency (%)",
            series: [ChartSeries(name: "forecasts", points: points, colour: .palette(0))])
        reliabilityFrame(&chart)
        return chart
    }

    /// A reliability diagram's frame (deterministic and ensemble alike): both axes in percent, the
    /// diagonal of perfect reliability, marker areas and the row of counts by cases.
    static func reliabilityFrame(_ chart: inout LineChart) {
        chart.xDomain = 0...100
        chart.yDomain = 0...100
        chart.diagonal = true
        chart.nRow = true
        chart.sizeByN = true
    }

    /// Lead buckets as the x axis's categories, in lead order: where each bucket sits, and the frame
    /// every by-lead chart shares (the labels under the axis, the row of counts below them).
    struct LeadAxis {
        let buckets: [LeadBucket]
        let position: [LeadBucket: Double]

        init(_ buckets: [LeadBucket]) {
            self.buckets = Array(Set(buckets)).sorted()
            position = Dictionary(
                uniqueKeysWithValues: self.buckets.enumerated().map { ($0.element, Double($0.offset)) })
        }

        var labels: [String] { buckets.map { Query.Verify.leadLabel($0.from, $0.to) } }

        func frame(_ chart: inout LineChart) {
            chart.xAxis = .categories(buckets.indices.map(Double.init), labels)
            chart.nRow = true
        }
    }

    /// The fetch log as a calendar of local days and hours.
    static func coverage(
        _ coverage: FetchCoverage, location: Location, range: (first: Int64, last: Int64), id: String
    ) -> CoverageCalendar {
        let offset = Int64(ZoneTime.offset(at: range.first, timezone: location.timezone))
        let firstDay = (range.first + offset).floorDiv(86400)
        let lastDay = (range.last + offset).floorDiv(86400)
        let hours = coverage.hours.map { hour, state -> (hour: Int64, state: CoverageCalendar.State) in
            let local = (hour + offset).floorDiv(3600)
            switch state {
            case .fetched: return (local, .fetched)
            case .repeated: return (local, .repeated)
            case .missed: return (local, .missed)
            }
        }
        return CoverageCalendar(
            id: id,
            title: "Fetches of \(location.name) by hour (usual interval \(coverage.cadenceHours) h)",
            description:
                "One column per local day, one row per hour: green a new forecast stored, light blue the same content fetched again, orange a fetch missed (a gap longer than the usual interval) or failed.",
            firstDay: firstDay, days: Int(lastDay - firstDay + 1), hours: hours)
    }

    /// A series of at most `maxPoints`: consecutive points averaged, n summed.
    static func downsample(_ points: [ChartPoint]) -> [ChartPoint] {
        guard points.count > maxPoints else { return points }
        let groups = (points.count + maxPoints - 1) / maxPoints
        return stride(from: 0, to: points.count, by: groups).map { start in
            let chunk = points[start..<min(points.count, start + groups)]
            let count = Double(chunk.count)
            let n = chunk.reduce(0) { $0 + ($1.n ?? 1) }
            return ChartPoint(
                x: chunk.reduce(0) { $0 + $1.x } / count, y: chunk.reduce(0) { $0 + $1.y } / count, n: n,
                note: "mean of \(chunk.count) points from \(chunk.first!.note ?? "") to \(chunk.last!.note ?? "")")
        }
    }

    /// A band of at most `maxPoints`, averaged in consecutive groups as `downsample` does its line.
    static func downsample(_ band: [ChartBand]) -> [ChartBand] {
        guard band.count > maxPoints else { return band }
        let groups = (band.count + maxPoints - 1) / maxPoints
        return stride(from: 0, to: band.count, by: groups).map { start in
            let chunk = band[start..<min(band.count, start + groups)]
            let count = Double(chunk.count)
            return ChartBand(
                x: chunk.reduce(0) { $0 + $1.x } / count, low: chunk.reduce(0) { $0 + $1.low } / count,
                high: chunk.reduce(0) { $0 + $1.high } / count)
        }
    }

    /// "24" or "23–25": the hours behind the points of daily trends.
    static func hoursRange(_ results: [TrendResult]) -> String {
        let hours = results.flatMap(\.points).map(\.hours)
        guard let low = hours.min(), let high = hours.max() else { return "0" }
        return low == high ? "\(low)" : "\(low)–\(high)"
    }

    /// Quantities below zero would be meaningless, so their axes start at 0.
    static func nonNegative(_ variable: Variable) -> Bool {
        [.precipitation, .speed, .percent].contains(variable.quantity)
    }

    static func number(_ value: Double) -> String { formatNumber(value, places: 2) }
}

extension Int64 {
    /// Division rounding towards minus infinity.
    func floorDiv(_ divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
