import FoundationEssentials
import WxCore
import WxQueries
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `wxdb query runs|forecast|verify|trend`: each subcommand (one file each) parses its options,
/// calls `WxQueries`, and describes its answer once as a ``Report``.
///
/// The subcommands are nested as swift-argument-parser nests them (`Query.Verify` is `wxdb query verify`),
/// each declared here and filled in by its own file, so no command type shares a name with its query.
enum Query {
    /// `wxdb query runs` (QueryRuns.swift).
    enum Runs {}
    /// `wxdb query forecast` (QueryForecast.swift).
    enum Forecast {}
    /// `wxdb query verify` (QueryVerify.swift).
    enum Verify {
        /// Verify's ensemble half (QueryVerifyEnsemble.swift).
        enum Ensembles {}
    }
    /// `wxdb query trend` (QueryTrend.swift).
    enum Trend {}
    /// `wxdb query compare` (QueryCompare.swift).
    enum Compare {}
    /// `wxdb query consistency` (QueryConsistency.swift).
    enum Consistency {}
    /// `wxdb query ensemble` (EnsembleCommands.swift).
    enum Ensemble {}

    static var command: Command {
        Command(
            name: "query",
            abstract: "Ask what was forecast, what happened, and how good the forecasts were.",
            subcommands: [
                Query.Runs.command, Query.Forecast.command, Query.Verify.command, Query.Trend.command,
                Query.Compare.command, Query.Consistency.command, Query.Ensemble.command
            ]
        )
    }

    /// Says so when the default source is not the best-ranked one, because better-ranked ones had
    /// no observation at any forecast hour asked for.
    static func noteSkippedSources(
        _ store: any Store, _ location: Location, chosen: String, requested: String?, _ context: Context
    ) throws {
        guard requested == nil else { return }
        let ranked = try ObservationSources.ranked(store, locationID: location.id)
        guard let position = ranked.firstIndex(of: chosen), position > 0 else { return }
        context.note(
            "Using source \(chosen): \(ranked[..<position].joined(separator: ", ")) has no observation at these forecasts' hours; choose one with --source"
        )
    }

    static func zoneLabel(_ location: Location) -> String {
        !ZoneTime.isKnown(location.timezone) ? "UTC" : location.timezone
    }

    static func local(_ instant: Int64, _ location: Location) -> String {
        TimeInput.local(instant, timezone: location.timezone)
    }

    static func span(_ seconds: Int64) -> String {
        let hours = Int((Double(seconds) / 3600).rounded()) + 1
        if hours < 48 { return "\(hours) hour\(hours == 1 ? "" : "s")" }
        return "\(Int((Double(hours) / 24).rounded())) days"
    }

    /// "ran 1.2 °C warm", "ran 3 % too high", or "showed no bias" when it rounds to zero.
    static func biasPhrase(_ bias: Double, unitText: String, variable: Variable) -> String {
        // Sums overflowed before values were range-checked: say so rather than print an empty number.
        guard bias.isFinite else { return "had a bias too large to compute (run 'wxdb doctor --deep --repair')" }
        let magnitude = formatNumber(abs(bias), places: 1)
        if magnitude == "0" { return "showed no bias" }
        // A bias of a percentage (humidity, cloud cover, rain chances) is in percentage points.
        let unitText = unitText == "%" ? " percentage points" : unitText
        if variable.quantity == .temperature { return "ran \(magnitude)\(unitText) \(bias > 0 ? "warm" : "cold")" }
        return "ran \(magnitude)\(unitText) too \(bias > 0 ? "high" : "low")"
    }

    /// When scoring finds no pairs because no forecast hour has passed yet, says when the first one
    /// will, instead of suggesting observations for hours that are still in the future.
    static func explainNoPairs(_ error: Error, store: any Store, location: Location, model: String?, now: Int64) throws
        -> Never
    {
        // A model the location does not fetch: ingest would not bring it, so say how to add it.
        if let queryError = error as? QueryError, case .noRuns(_, let model?) = queryError,
            !location.models.contains(model)
        {
            let stored = (try? store.runCountsByModel(locationID: location.id).map(\.model)) ?? []
            throw CLIError(
                "no forecast runs of model \(model) stored for \(location.name): it is not one of its models (\(location.models.joined(separator: ", ")))\(stored.isEmpty ? "" : "; runs are stored of \(stored.joined(separator: ", "))"). Add it with 'wxdb locations set \"\(location.name)\" --models \((location.models + [model]).joined(separator: ","))', then ingest or backfill"
            )
        }
        guard let queryError = error as? QueryError, case .noPairs = queryError,
            let runs = try? RunsQuery.runs(store, location: location, issued: TimeRange(), model: model), !runs.isEmpty
        else { throw error }
        // A run's first forecast hour: its first hour at or after its issue time.
        let firstForecastHour = runs.compactMap { run -> Int64? in
            guard let first = run.firstValidTime else { return nil }
            return max(first, (run.issuedAt + 3599) / 3600 * 3600)
        }.min()
        guard let first = firstForecastHour, first > now else { throw error }
        let wait = first - now
        let waitText = wait < 5400 ? "\(max(1, wait / 60)) minutes" : "\(Int((Double(wait) / 3600).rounded())) hours"
        throw CLIError(
            "no forecast hour of \(location.name) has passed yet, so there is nothing to score: the first, \(CivilTime.isoUTC(first)), passes in \(waitText), and the first ingest after it stores what was observed. To score history now, import forecasts saved earlier with 'wxdb import FILE --location \(location.name) --fetched-at TIME'"
        )
    }
}

/// Compact sparklines (▁▂▃▄▅▆▇█) on a shared scale, so two series can be compared by eye.
enum Sparkline {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// One line per series, each at most `width` characters (longer series are averaged in chunks).
    static func render(_ series: [[Double]], width: Int) -> [String] {
        let reduced = series.map { values -> [Double] in
            guard values.count > width, width > 0 else { return values }
            return (0..<width).map { i in
                let start = i * values.count / width
                let end = max(start + 1, (i + 1) * values.count / width)
                let chunk = values[start..<end]
                return chunk.reduce(0, +) / Double(chunk.count)
            }
        }
        let all = reduced.flatMap { $0 }.filter(\.isFinite)
        guard let low = all.min(), let high = all.max() else { return series.map { _ in "" } }
        return reduced.map { values in
            String(
                values.map { value -> Character in
                    guard value.isFinite else { return " " }
                    guard high > low else { return blocks[3] }
                    let position = (value - low) / (high - low) * Double(blocks.count - 1)
                    guard position.isFinite else { return blocks[3] }  // a span too wide for a double
                    return blocks[min(blocks.count - 1, max(0, Int(position.rounded())))]
                })
        }
    }
}
