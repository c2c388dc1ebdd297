import FoundationEssentials
import WxCore
import WxFetcher
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `wxdb backfill`: past forecast runs from Open-Meteo's Single Runs API, and the observed weather
/// of the same days, so a new location has scores at once.
enum BackfillCommand {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var network = NetworkOptions()
        var locations: [String] = []
        var days: Int?
        var range = TimeRangeOptions()
        var models: [String] = []
        var every: Int?
        var noObservations = false
        var output = FormatOption()

        static var table: [Opt<Options>] {
            // Repeated only, not comma-separated: a location's name may hold a comma ("Paris, TX").
            [
                Opt(
                    spec: OptionSpec(
                        name: "location", valueName: "name",
                        help: "Only this location (default: every saved location). Can be repeated.",
                        repeatable: true)
                ) {
                    $0.locations = $1
                },
                .int("days", "n", "Runs initialised in the last N days.", in: 1...3650, \.days)
            ]
                + TimeRangeOptions.options(\.range, on: "runs initialised")
                + [
                    ModelListOption.option(
                        \.models, name: "model",
                        help: "Models to load (default: the location's models; best_match is left out)."),
                    .int(
                        "every", "hours",
                        "Ask for a run every N hours (a multiple of 3) instead of the model's own cadence.",
                        in: 3...24, \.every),
                    .flag(
                        "no-observations", "Do not fetch the observed weather (era5) of the same days.",
                        \.noObservations)
                ]
                + FormatOption.options(
                    \.output, [.table, .json], help: "table (one summary line) or json (a summary object).")
                + DatabaseOption.options(\.database) + NetworkOptions.options(\.network)
        }

        func validate() throws {
            switch (days, range.from) {
            case (nil, nil): throw UsageError("give --days N or --from DATE to say which runs to load")
            case (.some, .some): throw UsageError("give either --days or --from, not both")
            default: break
            }
            if days != nil, range.to != nil { throw UsageError("--to goes with --from, not with --days") }
            if let every, every % 3 != 0 {
                throw UsageError(
                    "--every must be a multiple of 3 hours (the archive keeps runs every full 3 hours), not \(every)")
            }
            try range.validate()
        }
    }

    static var command: Command {
        Command(
            name: "backfill",
            abstract:
                "Load past forecast runs (Open-Meteo's Single Runs API) and the observed weather of the same days.",
            discussion: """
                For each model of each location (or those named) and each run initialised in the window, the run is
                fetched from the Single Runs API (WXDB_SINGLE_RUNS_URL, default
                https://single-runs-api.open-meteo.com/v1/forecast; with an API key the customer- host) and stored as
                an ordinary run whose issue time is the run's initialisation time. Run times follow the model's update
                interval from its meta.json (a built-in table when that cannot be read), aligned to 00 UTC and never
                finer than 3 hours; --every overrides. Runs already stored are skipped without a request, so running it
                again is free and an interrupted backfill continues where it stopped. Runs before the archive's start
                (2 April 2026 for most models, March 2024 for ecmwf_ifs) or not yet available are reported and not
                requested; a run the archive answers with HTTP 400 is reported by name and skipped. best_match blends
                models and has no single run: it is left out. Before the first request it says how many requests it
                will make and their share of the free hourly and daily budget; when a budget is spent it stops and says
                when to run it again. Then, unless --no-observations, era5 observations for the same days (through 16
                days after the window, up to now) are fetched as 'observe backfill' does.
                Exit status 0 when every available run is stored, 1 when anything failed or a budget stopped it.
                """,
            options: Options.self, run: run)
    }

    static func run(_ args: Options, _ context: Context) async throws {
        let store = try args.database.open(context)
        var locations = try store.locations()
        if !args.locations.isEmpty {
            locations = try args.locations.map { try LocationOption.resolve($0, in: store) }
        }
        guard !locations.isEmpty else {
            throw CLIError(
                "no saved locations to backfill; add one with 'wxdb locations add NAME --models icon_seamless'")
        }
        let now = context.nowUnix
        var targets: [(location: Location, models: [String], from: Int64, to: Int64)] = []
        var blends: [String] = []
        for location in locations {
            let from: Int64
            var to = now + 1
            if let days = args.days {
                from = now - Int64(days) * 86400
            } else {
                let range = try args.range.resolve(timezone: location.timezone, now: now)
                from = range.from!
                if let end = range.to { to = min(end, to) }
            }
            guard from < to else {
                throw CLIError("--from \(args.range.from ?? "") is in the future; runs exist only for past times")
            }
            let models = args.models.isEmpty ? location.models : args.models
            blends += models.filter { $0 == "best_match" }.map { _ in location.name }
            let single = models.filter { $0 != "best_match" }
            if !single.isEmpty { targets.append((location, single, from, to)) }
        }
        if !blends.isEmpty {
            context.note(
                "Note: best_match (\(blends.joined(separator: ", "))) blends models and has no single run, so it is left out; name models with --model (e.g. --model icon_seamless,ecmwf_ifs025) or 'wxdb locations set NAME --models ...'"
            )
        }
        guard !targets.isEmpty else {
            throw CLIError(
                "no model to backfill: best_match has no single run; give --model icon_seamless (or another single model)"
            )
        }

        let endpoints = args.network.endpoints(context)
        let client = args.network.httpClient(context)
        let backfill = SingleRunBackfill(
            store: store, client: client, endpoints: endpoints, now: { [context] in context.now() })
        backfill.sleep = { [context] seconds in try? await context.sleep(TimeInterval(seconds)) }
        backfill.notice = { [context] line in context.note(line) }
        if context.verbose { backfill.log = { [context] line in context.err(line) } }
        let plan = try await backfill.plan(targets, every: args.every)
        for cadence in plan.cadences {
            context.note("\(cadence.model): a run every \(cadence.interval / 3600) h (\(cadence.source))")
        }
        for skipped in plan.skipped { context.note(skipped.line) }
        context.note(preflight(plan, targets: targets, endpoints: endpoints, observations: !args.noObservations))

        if context.stderrIsTerminal && !context.quiet && !plan.runs.isEmpty {
            let started = Date()
            backfill.progress = { done, total in
                let elapsed = Date().timeIntervalSince(started)
                let rate = elapsed > 0 ? Double(done) / elapsed : 0
                let left = rate > 0 ? Int(Double(total - done) / rate) : 0
                let line =
                    done == total
                    ? "\r\u{1B}[K"
                    : String(
                        printf: "\rBackfill: %d/%d runs, %.1f runs/s, about %d:%02d left\u{1B}[K", done, total, rate,
                        left / 60, left % 60)
                writeToStandardError(line)
            }
        }
        var summary = BackfillSummary()
        summary.metaRequests = plan.metaRequests
        await backfill.run(plan, summary: &summary)

        if !args.noObservations && summary.stopped == nil {
            let era5 = Backfill(store: store, client: client, endpoints: endpoints)
            for target in targets {
                // Observations for every hour the window's runs forecast, up to now.
                let zone = target.location.timezone == "auto" ? "UTC" : target.location.timezone
                let fromDate = ZoneTime.date(of: target.from, timezone: zone)
                let toDate = ZoneTime.date(
                    of: min(target.to - 1 + Int64(SingleRunBackfill.forecastDays) * 86400, now), timezone: zone)
                do {
                    let result = try await era5.run(
                        location: target.location, fromDate: fromDate, toDate: toDate, now: now)
                    summary.observationsStored += result.hours
                    summary.observationRequests += result.requests
                } catch let error as BackfillError {
                    if case .failedPartway(_, let stored, _, _, _) = error {
                        summary.observationRequests += stored.requests
                    }
                    summary.failed.append("\(target.location.name) observations: \(error)")
                } catch {
                    summary.failed.append("\(target.location.name) observations: \(error)")
                }
            }
        }

        if args.output.format == .json {
            context.out(json(summary).serialized() + "\n")
        }
        if summary.succeeded {
            if args.output.format != .json { context.note(summary.line) }
            return
        }
        for failure in summary.failed.prefix(20) { context.err("failed: \(failure)") }
        if summary.failed.count > 20 { context.err("... and \(summary.failed.count - 20) more failures") }
        context.err(
            summary.stopped != nil
                ? "Error: \(summary.line)"
                : "Error: \(summary.line); fix the cause and run the same command again (stored runs are kept and skipped)"
        )
        throw IngestFailed()
    }

    /// What the backfill will ask for, and its share of the free tier's budgets.
    static func preflight(
        _ plan: BackfillPlan, targets: [(location: Location, models: [String], from: Int64, to: Int64)],
        endpoints: Endpoints, observations: Bool = true
    ) -> String {
        let modelCount = Set(targets.flatMap(\.models)).count
        var text =
            "Backfill: \(plan.runs.count) forecast request(s) for \(targets.count) location(s) and \(modelCount) model(s)"
            + " (\(plan.alreadyStored) run(s) already stored, \(plan.unavailable) unavailable)"
        // The observed weather is asked for again every time (the archive fills in recent days).
        if observations { text += ", then the observed weather from the archive API (a request or more per location)" }
        let limits = RateLimits()
        let weight = plan.totalWeight
        text += String(printf: "; weight %.1f (%.1f per request)", weight, plan.weightPerRequest)
        if endpoints.isFreeTier {
            text += String(
                printf: ", %.1f%% of Open-Meteo's free hourly budget (%.0f) and %.1f%% of the daily (%.0f)",
                weight / limits.perHour * 100, limits.perHour, weight / limits.perDay * 100, limits.perDay)
            if weight > limits.perDay {
                text += "; it will stop when today's budget is spent and continue when run again tomorrow"
            }
        } else {
            text += "; with an API key the free tier's limits do not apply"
        }
        return text
    }

    static func json(_ s: BackfillSummary) -> JSON {
        JSON.object([
            ("runs", .int(Int64(s.runs))),
            ("requested", .int(Int64(s.requested))),
            ("stored", .int(Int64(s.stored))),
            ("already_present", .int(Int64(s.alreadyPresent))),
            ("unavailable", .int(Int64(s.unavailable))),
            ("failed", .int(Int64(s.failed.count))),
            ("observations_stored", .int(Int64(s.observationsStored))),
            ("observation_requests", .int(Int64(s.observationRequests))),
            ("stopped", .string(s.stopped)),
            ("failures", .array(s.failed.map { .string($0) }))
        ])
    }
}
