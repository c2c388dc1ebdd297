import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What wxdb knows about Open-Meteo's Single Runs API archive without asking it (reference §6.4, §8).
public enum RunArchive {
    /// The archive keeps runs only every full 3 hours.
    public static let finestInterval: Int64 = 3 * 3600
    /// A run becomes available some hours after its initialisation (4-6 h for global models).
    public static let availabilityLag: Int64 = 6 * 3600
    /// Most models are archived from 2 April 2026 (earlier data was removed); ECMWF IFS HRES from March 2024.
    public static let defaultStart: Int64 = 1_775_088_000  // 2026-04-02T00:00Z
    public static let starts: [String: Int64] = ["ecmwf_ifs": 1_709_251_200]  // 2024-03-01T00:00Z

    /// Update intervals in hours when the model's meta.json cannot be had: Open-Meteo's documented
    /// cadences, never finer than the archive's 3 hours. Unknown models: 6 hours, as most global models.
    public static let intervalHours: [String: Int] = [
        "icon_seamless": 6, "icon_global": 6, "dwd_icon_seamless": 6, "icon_eu": 3, "icon_d2": 3,
        "gfs_seamless": 6, "gfs_global": 6, "ncep_gfs_seamless": 6, "gfs025": 6, "ncep_hrrr_conus": 3, "gfs_hrrr": 3,
        "ecmwf_ifs": 6, "ecmwf_ifs025": 6, "ecmwf_aifs025_single": 6,
        "gem_seamless": 6, "gem_global": 6, "jma_seamless": 6, "jma_gsm": 6, "jma_msm": 3,
        "metno_nordic": 3, "metno_seamless": 3, "meteofrance_arpege_world": 6, "meteofrance_arome_france": 3,
        "ukmo_global_deterministic_10km": 6
    ]
    public static let defaultIntervalHours = 6

    /// The first run the archive has for `model`.
    public static func start(of model: String) -> Int64 { starts[model] ?? defaultStart }

    /// `seconds` made a whole multiple of 3 hours, at least 3 hours.
    public static func usable(_ seconds: Int64) -> Int64 {
        let steps = (max(seconds, finestInterval) + finestInterval - 1) / finestInterval
        return steps * finestInterval
    }

    /// The run times in `[from, to)` every `interval` seconds, aligned to 00 UTC each day.
    public static func runTimes(from: Int64, to: Int64, interval: Int64) -> [Int64] {
        guard from < to, interval > 0 else { return [] }
        var times: [Int64] = []
        var day = from - ((from % 86400) + 86400) % 86400
        while day < to {
            var t = day
            while t < day + 86400 && t < to {
                if t >= from { times.append(t) }
                t += interval
            }
            day += 86400
        }
        return times
    }

    /// `2026-05-01T06:00`, the form the API's `run=` takes (UTC).
    public static func runParameter(_ time: Int64) -> String {
        String(CivilTime.isoUTC(time).prefix(16))
    }

    /// `2026-05-01T06:00Z`, how runs are named to people.
    public static func runName(_ time: Int64) -> String { runParameter(time) + "Z" }
}

/// How often a model runs, and the newest run the archive should have.
public struct RunCadence: Sendable, Equatable {
    public var model: String
    public var interval: Int64
    /// Where `interval` came from: `meta.json`, `--every` or `built-in table`.
    public var source: String
    /// The newest initialisation time to ask for: meta.json's last run, else now minus the availability lag.
    public var latestRun: Int64
}

/// One run a backfill stores, by location, model and initialisation time.
public struct PlannedRun: Sendable, Equatable {
    public var location: Location
    public var model: String
    public var time: Int64
}

/// Runs of one location and model that are not requested, and why.
public struct SkippedRuns: Sendable, Equatable {
    public enum Reason: String, Sendable {
        case beforeArchive = "before the archive's start"
        case notYetAvailable = "not yet available"
    }
    public var location: String
    public var model: String
    public var reason: Reason
    public var times: [Int64]

    public var line: String {
        let span =
            times.count == 1
            ? "run \(RunArchive.runName(times[0]))"
            : "\(times.count) runs from \(RunArchive.runName(times.first!)) to \(RunArchive.runName(times.last!))"
        var text = "\(location) \(model): \(span) \(times.count == 1 ? "is" : "are") \(reason.rawValue)"
        if reason == .beforeArchive {
            text += " (\(CivilTime.dateString(unix: RunArchive.start(of: model))))"
        }
        return text + "; not requested"
    }
}

/// What a backfill will do, known before its first request.
public struct BackfillPlan: Sendable {
    public var runs: [PlannedRun] = []
    /// Runs in the window already stored: skipped without a request.
    public var alreadyStored = 0
    /// meta.json requests made while planning (one per model with a known domain).
    public var metaRequests = 0
    public var skipped: [SkippedRuns] = []
    public var cadences: [RunCadence] = []
    /// Open-Meteo's weighted call count of one single-run request (as `ingest` counts it).
    public var weightPerRequest = SingleRunBackfill.requestWeight
    public var totalWeight: Double { Double(runs.count) * weightPerRequest }
    public var unavailable: Int { skipped.reduce(0) { $0 + $1.times.count } }
}

/// What one backfill did, for the summary line, `--format json` and the exit code.
public struct BackfillSummary: Sendable {
    /// Runs in the windows asked for (every model of every location).
    public var runs = 0
    public var requested = 0
    public var stored = 0
    /// Skipped without a request, or answered with content already stored.
    public var alreadyPresent = 0
    /// Before the archive's start, not yet available, or answered with a 400 for the run.
    public var unavailable = 0
    /// One line per run (or location) that failed.
    public var failed: [String] = []
    public var observationsStored = 0
    /// Archive requests for the observations (made again on every backfill); `requested` counts single runs.
    public var observationRequests = 0
    /// meta.json requests for the models' cadences.
    public var metaRequests = 0
    /// Why the backfill stopped before its end (a spent budget), with when to run it again.
    public var stopped: String?
    /// Values left empty because no weather can have them (`PhysicalRange`).
    public var outOfRange = RangeFilter()

    public init() {}

    public var succeeded: Bool { failed.isEmpty && stopped == nil }

    public var line: String {
        var text =
            "backfill: \(stored) runs stored, \(alreadyPresent) already present, \(unavailable) unavailable, \(failed.count) failed"
            + " (\(requested + observationRequests + metaRequests) requests); \(observationsStored) hours of observations stored"
        if let stopped { text += "; stopped: \(stopped)" }
        if let note = outOfRange.note { text += "; " + note }
        return text
    }
}

/// Loads past model runs from Open-Meteo's Single Runs API as ordinary runs whose `issued_at` is
/// the run's initialisation time, through the same store path (and dedup) as `ingest`.
///
/// Not `Sendable`, like `Ingestor`: make it, set it up and run it in the one task that owns the store.
public final class SingleRunBackfill {
    /// Days of each run asked for: the whole horizon wxdb scores (16 days).
    public static let forecastDays = 16
    /// One location, one model, every hourly and daily variable, 16 days.
    public static let requestWeight = ForecastRequest.weightPerLocation(
        variables: Variables.hourly.count + Variables.daily.count, models: 1, days: forecastDays)

    let store: any Store
    let client: HTTPClient
    let endpoints: Endpoints
    let now: () -> Date
    /// Called after each run with (runs done, runs in total).
    public var progress: ((Int, Int) -> Void)?
    /// Lines a person running the backfill should see (unavailable runs, waits).
    public var notice: ((String) -> Void)?
    /// A line per request (`--verbose`).
    public var log: ((String) -> Void)?
    /// Waits this many seconds (tests replace it so they never sleep).
    public var sleep: (Int64) async -> Void = { seconds in
        try? await Task.sleep(nanoseconds: UInt64(seconds) * 1_000_000_000)
    }

    public init(store: any Store, client: HTTPClient, endpoints: Endpoints, now: @escaping () -> Date = Date.init) {
        self.store = store
        self.client = client
        self.endpoints = endpoints
        self.now = now
    }

    var nowUnix: Int64 { Int64(now().timeIntervalSince1970) }

    /// The model's cadence: `every` hours when given, else `update_interval_seconds` from its
    /// meta.json, else the built-in table (and a notice saying so); never finer than 3 hours.
    public func cadence(of model: String, every: Int?) async -> RunCadence {
        let fallbackLatest = nowUnix - RunArchive.availabilityLag
        var meta: (interval: Int64, last: Int64)?
        if let json = await client.modelMeta(model, endpoints: endpoints),
            let interval = json["update_interval_seconds"]?.numberValue, interval > 0, interval < 1e7,
            let last = json["last_run_initialisation_time"]?.numberValue, last > 0, last < 1e11
        {
            meta = (Int64(interval), Int64(last))
        }
        // meta.json's last run is the newest the archive can have; one from the future is not believed.
        let latest = meta.map { min($0.last, nowUnix) } ?? fallbackLatest
        if let every {
            return RunCadence(
                model: model, interval: RunArchive.usable(Int64(every) * 3600), source: "--every", latestRun: latest)
        }
        if let meta {
            return RunCadence(
                model: model, interval: RunArchive.usable(meta.interval), source: "meta.json", latestRun: latest)
        }
        let hours = RunArchive.intervalHours[model] ?? RunArchive.defaultIntervalHours
        notice?(
            "\(model): its model metadata (meta.json) could not be read; using wxdb's built-in cadence of every \(hours) hours"
        )
        return RunCadence(
            model: model, interval: RunArchive.usable(Int64(hours) * 3600), source: "built-in table",
            latestRun: latest)
    }

    /// Every run of each (location, model) initialised in its window `[from, to)`: those stored
    /// already are counted and left out (no request), those the archive cannot have are listed
    /// as skipped, the rest are planned in time order, model by model.
    public func plan(
        _ targets: [(location: Location, models: [String], from: Int64, to: Int64)], every: Int?
    ) async throws -> BackfillPlan {
        var plan = BackfillPlan()
        var cadences: [String: RunCadence] = [:]
        for target in targets {
            for model in target.models {
                if cadences[model] == nil {
                    // cadence(of:) asks for the model's meta.json when it has a domain (even with --every).
                    if ModelDomains.domains[model] != nil { plan.metaRequests += 1 }
                    let cadence = await cadence(of: model, every: every)
                    cadences[model] = cadence
                    plan.cadences.append(cadence)
                }
                let cadence = cadences[model]!
                let times = RunArchive.runTimes(from: target.from, to: target.to, interval: cadence.interval)
                let stored = try store.knownRunTimes(
                    locationID: target.location.id, model: model, from: target.from, to: target.to)
                var before: [Int64] = []
                var later: [Int64] = []
                for time in times {
                    if stored.contains(time) {
                        plan.alreadyStored += 1
                    } else if time < RunArchive.start(of: model) {
                        before.append(time)
                    } else if time > cadence.latestRun {
                        later.append(time)
                    } else {
                        plan.runs.append(PlannedRun(location: target.location, model: model, time: time))
                    }
                }
                for (reason, list) in [(SkippedRuns.Reason.beforeArchive, before), (.notYetAvailable, later)]
                where !list.isEmpty {
                    plan.skipped.append(
                        SkippedRuns(location: target.location.name, model: model, reason: reason, times: list))
                }
            }
        }
        return plan
    }

    /// The request for one run: exactly the variables the store keeps, as `ingest` asks for them,
    /// with `run=` and no `current` or past days.
    static func query(_ run: PlannedRun) -> [(String, String)] {
        let request = ForecastRequest(
            locations: [run.location], models: [run.model], forecastDays: forecastDays, pastDays: 0)
        return request.query.filter { $0.0 != "current" && $0.0 != "past_days" } + [
            ("run", RunArchive.runParameter(run.time))
        ]
    }

    /// Fetches and stores each planned run, each in its own transaction, so an interrupted
    /// backfill keeps every run it finished and a rerun continues with the rest. Stops at a spent
    /// hourly or daily budget (wxdb's own count or Open-Meteo's 429) and says when to run again.
    public func run(_ plan: BackfillPlan, limits: RateLimits = RateLimits(), summary: inout BackfillSummary) async {
        summary.runs += plan.runs.count + plan.alreadyStored + plan.unavailable
        summary.alreadyPresent += plan.alreadyStored
        summary.unavailable += plan.unavailable
        let secret = endpoints.apiKey
        for (index, run) in plan.runs.enumerated() {
            defer { progress?(index + 1, plan.runs.count) }
            let name = "\(run.location.name) \(run.model) run \(RunArchive.runName(run.time))"
            let url: URL
            do {
                url = try endpoints.url(endpoints.singleRuns, Self.query(run))
            } catch {
                summary.failed.append("\(name): \(error)")
                continue
            }
            let shownURL = HTTPClient.redacted(url)
            func logFailure(_ reason: String, status: Int? = nil, weight: Double? = nil, at time: Int64? = nil) {
                let record = FetchRecord(
                    fetchedAt: time ?? nowUnix, origin: .singleRun, request: shownURL, httpStatus: status,
                    apiWeight: weight)
                try? store.logFailure(
                    record, locationID: run.location.id, model: run.model,
                    error: HTTPClient.scrub(reason, secret: secret))
            }
            if endpoints.isFreeTier {
                do {
                    if let stop = try await budgetStop(adding: plan.weightPerRequest, limits: limits) {
                        summary.stopped = stop
                        return
                    }
                } catch {
                    summary.failed.append("\(name): cannot read the fetch log: \(error)")
                    return
                }
            }
            summary.requested += 1
            log?("GET \(shownURL) (weight \(String(printf: "%.1f", plan.weightPerRequest)))")
            let response: HTTPResponse
            do {
                response = try await client.get(url, maxBodyBytes: client.maxBodyBytes) { attempt in
                    guard let error = attempt.error else { return }
                    logFailure(
                        error.description + (attempt.retryAfter != nil ? " (retrying)" : ""), status: attempt.status,
                        weight: 1, at: Int64(attempt.startedAt.timeIntervalSince1970 + attempt.duration))
                }
            } catch {
                switch error {
                case .http(let status, let reason) where status == 400:
                    // The archive does not have this run: reported by name, not retried.
                    summary.unavailable += 1
                    let why = HTTPClient.scrub(reason ?? "HTTP 400", secret: secret)
                    notice?("\(name): not available (\(why)); skipped")
                case .invalidBody(let text) where text.contains("RunUnavailable"):
                    summary.unavailable += 1
                    notice?("\(name): not available (the server broke off: \(text)); skipped")
                case .rateLimited(let reason) where [.hour, .day].contains(RateLimitWindow(reason: reason)):
                    summary.stopped =
                        "Open-Meteo's \(RateLimitWindow(reason: reason) == .day ? "daily" : "hourly") limit is reached; "
                        + againAt(RateLimitWindow(reason: reason) == .day ? 86400 : 3600)
                    return
                default:
                    summary.failed.append("\(name): \(HTTPClient.scrub(error.description, secret: secret))")
                }
                continue
            }
            let fetchedAt = nowUnix
            let record = FetchRecord(
                fetchedAt: fetchedAt, origin: .singleRun, request: shownURL, httpStatus: response.status,
                issuedAt: [run.model: run.time], recordAnalysis: false, apiWeight: plan.weightPerRequest)
            do {
                let decoded = try ForecastDecoder.decodeSingle(
                    response.body, defaultModel: run.model, onlyModel: run.model)
                if let problem = GridDistance.mismatch(
                    location: run.location.name, latitude: run.location.latitude,
                    longitude: run.location.longitude, gridLatitude: decoded.latitude,
                    gridLongitude: decoded.longitude)
                {
                    throw BackfillRefusal(text: problem + "; not stored")
                }
                // An answer for another run (hours shifted by days, another run's window) must not be
                // stored as this one: the run's hours start at local midnight of its day, within the
                // day before its initialisation, and reach past it.
                let hours = decoded.models.flatMap(\.hourlyTimes)
                if let first = hours.min(), let last = hours.max(),
                    first > run.time || first <= run.time - 86400 || last < run.time
                {
                    throw BackfillRefusal(
                        text:
                            "the answer's hours run from \(CivilTime.isoUTC(first)) to \(CivilTime.isoUTC(last)), which is not the window of run \(RunArchive.runName(run.time)) (it starts within the day before the run); not stored"
                    )
                }
                // The run's hours only: a `current` block is no observation of this past run's time.
                var forecast = decoded
                forecast.current = nil
                summary.outOfRange.merge(RangeFilter(refused: forecast.outOfRange))
                for outcome in try store.store(forecast, for: run.location, fetch: record) {
                    log?("\(name): \(outcome.kind.rawValue) run \(outcome.runID) (\(outcome.hours) hours)")
                    if outcome.kind == .stored { summary.stored += 1 } else { summary.alreadyPresent += 1 }
                }
            } catch StoreError.locationRemoved {
                summary.failed.append("\(name): the location was removed while the backfill ran")
            } catch {
                let reason = HTTPClient.scrub(userMessage(for: error), secret: secret)
                summary.failed.append("\(name): \(reason)")
                try? store.logFailure(record, locationID: run.location.id, model: run.model, error: reason)
            }
        }
    }

    /// Why the next request must not be sent (a spent hourly or daily budget), or nil. Waits out
    /// the minute window as `ingest` does.
    func budgetStop(adding weight: Double, limits: RateLimits) async throws -> String? {
        var use = try BudgetUse.read(store, now: nowUnix)
        if use.minute + weight > limits.perMinute {
            let wait = 61 - nowUnix % 60
            notice?("Waiting \(wait) s for the next minute: Open-Meteo's per-minute budget is used up")
            await sleep(wait)
            use = try BudgetUse.read(store, now: nowUnix)
        }
        if use.day + weight > limits.perDay {
            return String(
                printf: "the free daily budget is spent (%.0f of %.0f weighted calls used today); ", use.day,
                limits.perDay) + againAt(86400)
        }
        if use.hour + weight > limits.perHour {
            return String(
                printf: "the free hourly budget is spent (%.0f of %.0f weighted calls used this hour); ", use.hour,
                limits.perHour) + againAt(3600)
        }
        return nil
    }

    /// "run the same command again after <next window>; stored runs are skipped".
    func againAt(_ window: Int64) -> String {
        let next = nowUnix - nowUnix % window + window
        return
            "run the same command again after \(CivilTime.isoUTC(next)) (the runs stored so far are kept and skipped)"
    }
}

struct BackfillRefusal: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}
