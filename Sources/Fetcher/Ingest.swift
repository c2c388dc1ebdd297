import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Options of one `wxdb ingest`.
public struct IngestOptions: Sendable {
    public var forecastDays = 16
    public var pastDays = 1
    public var limits = RateLimits()
    public init() {}
}

/// What one ingest did, for the summary line and the exit code.
public struct IngestSummary: Sendable {
    public var stored = 0
    public var repeated = 0
    /// Location name and reason, one per failed location (and model).
    public var failed: [(location: String, reason: String)] = []
    /// Locations removed (by another command) while the ingest ran: nothing stored, not a failure.
    public var removed: [String] = []
    public var requests = 0
    /// Values left empty because no weather can have them (`PhysicalRange`).
    public var outOfRange = RangeFilter()
    /// Why the database stopped answering and stayed away through every retry; the locations
    /// fetched but not stored then, and those not fetched at all, are in `failed`.
    public var databaseUnreachable: String?

    public var succeeded: Bool { failed.isEmpty }

    /// One line: `ingest: 3 stored, 0 repeated, 1 failed (Paris: HTTP 500 ...)`.
    public var line: String {
        var text = "ingest: \(stored) stored, \(repeated) repeated, \(failed.count) failed"
        if !removed.isEmpty {
            text +=
                ", \(removed.count) removed while it ran (\(removed.prefix(3).joined(separator: ", "))\(removed.count > 3 ? " and \(removed.count - 3) more" : ""))"
        }
        if !failed.isEmpty {
            // Group identical reasons so a batch failure reads once.
            var order: [String] = []
            var names: [String: [String]] = [:]
            for (location, reason) in failed {
                if names[reason] == nil { order.append(reason) }
                names[reason, default: []].append(location)
            }
            text +=
                " ("
                + order.map { reason in
                    let who = Array(Set(names[reason]!)).sorted()
                    let list =
                        who.count > 3
                        ? who.prefix(3).joined(separator: ", ") + " and \(who.count - 3) more"
                        : who.joined(separator: ", ")
                    return "\(list): \(reason)"
                }.joined(separator: "; ") + ")"
        }
        if let note = outOfRange.note { text += "; " + note }
        return text
    }
}

/// Fetches forecasts for saved locations and stores each response as runs.
///
/// Not `Sendable`: it writes through one `Store` (which is not) and its `now`, `progress` and `log`
/// hooks are plain closures, called only from `run` in the caller's task (so they may capture the
/// caller's non-`Sendable` state). Make it, set it up and run it in the one task that owns the store.
public final class Ingestor {
    let store: any Store
    let client: HTTPClient
    let endpoints: Endpoints
    let now: () -> Date
    /// Called after each request with (locations done, locations in total), for a progress line.
    public var progress: ((Int, Int) -> Void)?
    /// Called with a line about each request and location (`--verbose`).
    public var log: ((String) -> Void)?
    /// Called with what a person running the ingest should know, such as why it waits.
    public var notice: ((String) -> Void)?
    /// Waits this many seconds (tests replace it so they never sleep).
    public var sleep: (Int64) async -> Void = { seconds in
        try? await Task.sleep(nanoseconds: UInt64(seconds) * 1_000_000_000)
    }
    /// Whether a store failed only because the database cannot be reached now (its server stopped
    /// or restarting). Such a store is tried again as a request is (`client.retry`, waits through
    /// `client.sleep`); when it still fails, no further request is sent, since nothing fetched
    /// could be stored.
    public var isUnreachable: (Error) -> Bool = { _ in false }

    public init(store: any Store, client: HTTPClient, endpoints: Endpoints, now: @escaping () -> Date = Date.init) {
        self.store = store
        self.client = client
        self.endpoints = endpoints
        self.now = now
    }

    var nowUnix: Int64 { Int64(now().timeIntervalSince1970) }

    /// The oldest model run `meta.json` may name (global models run every 6-12 h; ten days
    /// leaves room for an outage), beyond which its time is not believed.
    static let oldestModelRunDays = 10

    /// Groups locations that share request options (their model list) into requests of at most
    /// `ForecastRequest.maxLocations`, in a stable order.
    public static func plan(_ locations: [Location], options: IngestOptions) -> [ForecastRequest] {
        var order: [[String]] = []
        var groups: [[String]: [Location]] = [:]
        for location in locations {
            // Ensemble models come from the Ensemble API (EnsembleIngest), not the forecast API.
            let models = location.models.filter { !EnsembleModels.isEnsemble($0) }
            guard !models.isEmpty else { continue }
            if groups[models] == nil { order.append(models) }
            groups[models, default: []].append(location)
        }
        return order.flatMap { models -> [ForecastRequest] in
            let members = groups[models]!
            return stride(from: 0, to: members.count, by: ForecastRequest.maxLocations).map { start in
                ForecastRequest(
                    locations: Array(members[start..<min(start + ForecastRequest.maxLocations, members.count)]),
                    models: models, forecastDays: options.forecastDays, pastDays: options.pastDays)
            }
        }
    }

    /// Fetches and stores every location; one request failing never stops the others, unless the
    /// database stopped answering (`databaseUnreachable`): then nothing more is fetched.
    public func run(_ locations: [Location], options: IngestOptions) async -> IngestSummary {
        var summary = IngestSummary()
        let requests = Self.plan(locations, options: options)
        var issuedAt: [String: Int64] = [:]
        var metaTried: Set<String> = []
        var done = 0
        for request in requests {
            // Nothing fetched now could be stored: the API's budget is not spent on it.
            if summary.databaseUnreachable != nil {
                for location in request.locations {
                    for _ in request.models {
                        summary.failed.append((location.name, "not fetched, the database did not answer"))
                    }
                }
                done += request.locations.count
                progress?(done, locations.count)
                continue
            }
            for model in request.models where !metaTried.contains(model) {
                metaTried.insert(model)
                if let time = await modelRunTime(model) { issuedAt[model] = time }
            }
            await fetch(request, issuedAt: issuedAt, options: options, summary: &summary)
            done += request.locations.count
            progress?(done, locations.count)
        }
        return summary
    }

    /// The initialisation time of the model's latest run, from `meta.json`; nil when the model is
    /// a blend, unknown, or the metadata cannot be had (never an ingest failure).
    func modelRunTime(_ model: String) async -> Int64? {
        guard let json = await client.modelMeta(model, endpoints: endpoints),
            let time = json["last_run_initialisation_time"]?.numberValue, time > 0, time == time.rounded()
        else { return nil }
        // A run from the future, or older than any forecast wxdb asks for, is not the run this
        // answer came from: every lead time would be wrong, so fall back to the fetch time.
        let now = Double(nowUnix)
        guard time <= now + 3600, time >= now - Double(Self.oldestModelRunDays * 86400) else { return nil }
        return Int64(time)
    }

    func fetch(
        _ request: ForecastRequest, issuedAt: [String: Int64], options: IngestOptions, summary: inout IngestSummary
    ) async {
        let perRowWeight = request.weight / Double(request.locations.count * request.models.count)
        // Every text that reaches the fetch log or the summary may quote the server, which may
        // quote the key back: scrub it once, here, for all of them.
        let secret = endpoints.apiKey
        // One failed attempt, logged for the given locations (all by default) and every model in one transaction.
        func logFailures(_ record: FetchRecord, _ reason: String, for locations: [Location]? = nil) {
            let reason = HTTPClient.scrub(reason, secret: secret)
            let targets = (locations ?? request.locations).flatMap { location in
                request.models.map { (Optional(location.id), Optional($0)) }
            }
            try? store.logFailures(record, for: targets, error: reason)
        }
        func noteFailed(_ reason: String, for locations: [Location]? = nil) {
            let reason = HTTPClient.scrub(reason, secret: secret)
            for location in locations ?? request.locations {
                for _ in request.models { summary.failed.append((location.name, reason)) }
            }
        }
        func failAll(_ reason: String, status: Int? = nil, url: String?, weightPerRow: Double? = nil) {
            noteFailed(reason)
            logFailures(
                FetchRecord(
                    fetchedAt: nowUnix, origin: .fetch, request: url, httpStatus: status, apiWeight: weightPerRow),
                reason)
        }

        let url: URL
        do {
            url = try endpoints.url(endpoints.forecast, request.query)
        } catch {
            failAll("\(error)", url: nil)
            return
        }
        let shownURL = HTTPClient.redacted(url)

        if endpoints.isFreeTier {
            do {
                var use = try await storeRetrying("Reading the budget from the fetch log") {
                    try BudgetUse.read(store, now: nowUnix)
                }
                if use.minute + request.weight > options.limits.perMinute {
                    // The minute window resets soon: wait for it rather than be refused.
                    let wait = 61 - nowUnix % 60
                    notice?(
                        String(
                            printf:
                                "Waiting %ld s for the next minute: requests this minute already used %.0f of Open-Meteo's %.0f weighted calls a minute, and the next one needs %.1f",
                            wait, use.minute, options.limits.perMinute, request.weight))
                    await sleep(wait)
                    use = try BudgetUse.read(store, now: nowUnix)
                }
                if let refusal = use.refusal(adding: request.weight, limits: options.limits) {
                    failAll("not sent: " + refusal, url: shownURL)
                    return
                }
            } catch  where isUnreachable(error) {
                summary.databaseUnreachable = HTTPClient.scrub(userMessage(for: error), secret: secret)
                noteFailed("not fetched, the database did not answer")
                return
            } catch {
                failAll("cannot read the fetch log: \(error)", url: shownURL)
                return
            }
        }

        summary.requests += 1
        log?(
            "GET \(shownURL) (\(request.locations.count) location(s), weight \(String(printf: "%.1f", request.weight)))"
        )
        let response: HTTPResponse
        do {
            // Failed attempts count as one call each at Open-Meteo, shared by the batch's rows.
            let failedShare = 1 / Double(request.locations.count * request.models.count)
            response = try await client.get(url, maxBodyBytes: max(client.maxBodyBytes, request.responseByteBound)) {
                attempt in
                guard let error = attempt.error else { return }
                let record = FetchRecord(
                    fetchedAt: Int64(attempt.startedAt.timeIntervalSince1970 + attempt.duration),
                    origin: .fetch, request: shownURL, httpStatus: attempt.status,
                    durationMilliseconds: Int(attempt.duration * 1000), apiWeight: failedShare)
                logFailures(record, error.description + (attempt.retryAfter != nil ? " (retrying)" : ""))
            }
        } catch {
            // Every attempt is already in the fetch log; only the summary is left.
            noteFailed(error.description)
            return
        }

        let fetchedAt = nowUnix
        let decoded: [ForecastDecoder.Element]
        do {
            decoded = try ForecastDecoder.decodeEach(
                response.body, defaultModel: request.models[0], models: request.models)
        } catch {
            failAll("unusable response: \(error)", status: response.status, url: shownURL, weightPerRow: perRowWeight)
            return
        }

        let record = FetchRecord(
            fetchedAt: fetchedAt, origin: .fetch, request: shownURL, httpStatus: response.status,
            issuedAt: issuedAt, apiWeight: perRowWeight)
        let (pairs, refused) = Self.match(decoded, to: request.locations)
        for (location, reason) in refused {
            log?("\(location.name): refused: \(reason)")
            noteFailed(reason, for: [location])
            logFailures(record, reason, for: [location])
        }
        for (location, item) in pairs {
            var record = record
            record.request = ownRequest(location, of: request) ?? shownURL
            if summary.databaseUnreachable != nil {
                for _ in request.models {
                    summary.failed.append((location.name, "fetched but not stored, the database did not answer"))
                }
                continue
            }
            do {
                let outcomes = try await storeRetrying("Storing " + location.name) {
                    try store.store(item, for: location, fetch: record)
                }
                summary.outOfRange.merge(RangeFilter(refused: item.outOfRange))
                for outcome in outcomes {
                    log?(
                        "\(location.name) \(outcome.model): \(outcome.kind.rawValue) run \(outcome.runID) (\(outcome.hours) hours, \(outcome.days) days)"
                    )
                    if outcome.kind == .stored { summary.stored += 1 } else { summary.repeated += 1 }
                }
                let missing = Set(request.models).subtracting(outcomes.map(\.model))
                for model in missing.sorted() {
                    summary.failed.append((location.name, "model \(model) missing from the response"))
                    try? store.logFailure(
                        record, locationID: location.id, model: model, error: "model missing from the response")
                }
            } catch StoreError.locationRemoved {
                // Removed by another command while this one ran: nothing to store it for.
                summary.removed.append(location.name)
            } catch  where isUnreachable(error) {
                // Its fetch-log row cannot be written either; the command's Error names what was lost.
                summary.databaseUnreachable = HTTPClient.scrub(userMessage(for: error), secret: secret)
                for _ in request.models {
                    summary.failed.append((location.name, "fetched but not stored, the database did not answer"))
                }
            } catch {
                let reason = HTTPClient.scrub(userMessage(for: error), secret: secret)
                summary.failed.append((location.name, reason))
                try? store.logFailure(record, locationID: location.id, model: nil, error: reason)
            }
        }
    }

    /// `write`, tried again while the database is unreachable, with the backoff and sleeper of the
    /// HTTP retries. Each try is one whole transaction, which the server rolls back when it is cut
    /// off, so a try that fails stored nothing and the next one stores the run once.
    func storeRetrying<T>(_ what: String, _ write: () throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try write()
            } catch  where isUnreachable(error) && attempt < client.retry.attempts {
                let wait = client.retry.delay(beforeRetry: attempt)
                notice?(
                    "\(what): the database did not answer (\(userMessage(for: error))); trying again in "
                        + String(printf: "%.1f", wait) + " s (attempt \(attempt + 1) of \(client.retry.attempts))")
                try? await client.sleep(wait)
                attempt += 1
            }
        }
    }

    /// The URL that asks for `location` alone with the batch's options, for its fetch-log rows: a
    /// batch's own URL names every location of the batch (3.3 kB for 100), and writing it into each
    /// location's row made the fetch log grow with the batch size, a third of the database at scale.
    /// A failed batch is still logged with the URL that was sent, to reproduce the failure.
    func ownRequest(_ location: Location, of request: ForecastRequest) -> String? {
        let own = ForecastRequest(
            locations: [location], models: request.models, forecastDays: request.forecastDays,
            pastDays: request.pastDays)
        return (try? endpoints.url(endpoints.forecast, own.query)).map(HTTPClient.redacted)
    }

    /// Pairs each element of an answer with the location it describes: by `location_id` where the
    /// answer has them (Open-Meteo leaves it off the first element only), else by position; then
    /// checks the element decoded and its grid point is near the location (`GridDistance`). What
    /// cannot be paired, is paired twice, cannot be decoded or lies too far away is refused with
    /// the reason, per location, so the other locations of the batch are still stored.
    static func match(_ elements: [ForecastDecoder.Element], to locations: [Location])
        -> (pairs: [(Location, ForecastResponse)], refused: [(Location, String)])
    {
        let anyID = elements.contains { $0.locationID != nil }
        var byIndex: [Int: [ForecastDecoder.Element]] = [:]
        for (position, element) in elements.enumerated() {
            byIndex[element.locationID ?? (anyID ? 0 : position), default: []].append(element)
        }
        let counts = "the response holds \(elements.count) location(s) for the \(locations.count) asked for"
        var pairs: [(Location, ForecastResponse)] = []
        var refused: [(Location, String)] = []
        for (index, location) in locations.enumerated() {
            let candidates = byIndex[index] ?? []
            guard let candidate = candidates.first else {
                refused.append(
                    (location, "no answer for this location in the response (\(counts)); nothing stored for it"))
                continue
            }
            guard candidates.count == 1 else {
                refused.append(
                    (
                        location,
                        "\(candidates.count) answers claim to be this location (location_id \(index)) and \(counts); none was stored"
                    ))
                continue
            }
            let element: ForecastResponse
            switch candidate.result {
            case .success(let decoded): element = decoded
            case .failure(let error):
                refused.append((location, "unusable response: \(error)"))
                continue
            }
            if let problem = GridDistance.mismatch(
                location: location.name, latitude: location.latitude, longitude: location.longitude,
                gridLatitude: element.latitude, gridLongitude: element.longitude)
            {
                refused.append((location, problem + "; not stored"))
                continue
            }
            pairs.append((location, element))
        }
        return (pairs, refused)
    }
}
