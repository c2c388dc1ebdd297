import FoundationEssentials
import WxCore
import WxStore

/// What one ensemble ingest did.
public struct EnsembleIngestSummary: Sendable, Equatable {
    /// Runs added, and runs whose content was already stored.
    public var stored = 0
    public var repeated = 0
    /// Weighted calls sent (Open-Meteo's count, every member counted).
    public var weight = 0.0
    /// One line per failed request or location, worded for the user.
    public var failures: [String] = []
    public init() {}
}

/// Fetches ensemble models from the Ensemble API and stores every member (issue 31).
public enum EnsembleIngest {
    /// Fetches `models` (ensembles) for `locations` in weight-limited batches and stores each location's
    /// runs whole. Every (location, model) gets a fetch-log row carrying its share of the request's
    /// weight, so the free tier's budget counts ensembles; a batch that would break the budget is not sent.
    public static func run(
        store: any Store, client: HTTPClient, endpoints: Endpoints, locations: [Location],
        models: [String], forecastDays: Int, now: Int64, issuedAt: [String: Int64] = [:]
    ) async -> EnsembleIngestSummary {
        var summary = EnsembleIngestSummary()
        // The run's initialisation time, as deterministic runs get it: the model's meta.json, asked
        // once per model; a blend or an unreadable or implausible answer leaves the cadence estimate.
        var issuedAt = issuedAt
        for model in models where issuedAt[model] == nil {
            if let time = await runTime(model, client: client, endpoints: endpoints, now: now) {
                issuedAt[model] = time
            }
        }
        for request in EnsembleRequest.batches(locations: locations, models: models, forecastDays: forecastDays) {
            let targets = request.locations.flatMap { location in models.map { (location.id as Int64?, $0 as String?) }
            }
            let share = request.weight / Double(max(1, targets.count))
            let record = FetchRecord(fetchedAt: now, origin: .fetch, apiWeight: share)
            if endpoints.isFreeTier, let use = try? BudgetUse.read(store, now: now),
                let refusal = use.refusal(adding: request.weight, limits: RateLimits())
            {
                summary.failures.append("Ensemble API: \(refusal)")
                continue
            }
            let body: [UInt8]
            do {
                let url = try endpoints.url(endpoints.ensemble, request.query)
                let bound = request.locations.count * models.count * 16 << 20
                body = Array(try await client.get(url, maxBodyBytes: max(HTTPClient.defaultMaxBodyBytes, bound)).body)
            } catch {
                summary.failures.append("Ensemble API: \(error)")
                try? store.logFailures(record, for: targets, error: "\(error)")
                continue
            }
            summary.weight += request.weight
            let responses: [EnsembleResponse]
            do {
                responses = try EnsembleDecoder.decode(body, models: models)
                guard responses.count == request.locations.count else {
                    throw DecodeError.invalidJSON(
                        "\(responses.count) locations in the answer, \(request.locations.count) asked for")
                }
            } catch {
                summary.failures.append("Ensemble API: \(error)")
                try? store.logFailures(record, for: targets, error: "\(error)")
                continue
            }
            for (location, response) in zip(request.locations, responses) {
                for forecast in response.models {
                    do {
                        let outcome = try store.storeEnsemble(
                            forecast, grid: (response.latitude, response.longitude, response.elevation),
                            for: location, issuedAt: issuedAt[forecast.model], fetchedAt: now)
                        let repeated: Bool
                        if case .repeated = outcome { repeated = true } else { repeated = false }
                        if repeated { summary.repeated += 1 } else { summary.stored += 1 }
                        try store.logFetch(
                            record, locationID: location.id, model: forecast.model,
                            outcome: repeated ? "repeated" : "stored", runID: nil, error: nil)
                    } catch {
                        summary.failures.append("\(location.name) \(forecast.model): \(error)")
                        try? store.logFailure(record, locationID: location.id, model: forecast.model, error: "\(error)")
                    }
                }
            }
        }
        return summary
    }

    /// The initialisation time of the ensemble model's latest run from its meta.json; nil when it has
    /// no known domain, the metadata cannot be had, or the time is in the future or older than any
    /// run an answer can be from (as `Ingest.modelRunTime` judges deterministic models').
    static func runTime(_ model: String, client: HTTPClient, endpoints: Endpoints, now: Int64) async -> Int64? {
        guard EnsembleModels.domains[model] != nil,
            let json = await client.modelMeta(model, endpoints: endpoints),
            let time = json["last_run_initialisation_time"]?.numberValue, time > 0, time == time.rounded(),
            time <= Double(now + 3600), time >= Double(now - Int64(Ingestor.oldestModelRunDays) * 86400)
        else { return nil }
        return Int64(time)
    }
}
