import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Open-Meteo endpoints wxdb talks to, from the environment (tests and the demo point them at
/// a local replay server), and the API key when there is one.
public struct Endpoints: Sendable {
    public var forecast: String
    public var archive: String
    public var geocoding: String
    public var meta: String
    /// Open-Meteo's Single Runs API: one past model run by its initialisation time (`wxdb backfill`).
    public var singleRuns: String
    /// A commercial key: requests then go to the `customer-` hosts with `apikey=`.
    public var apiKey: String?
    /// Open-Meteo's Ensemble API: every member of an ensemble model's latest run.
    public var ensemble: String = "https://ensemble-api.open-meteo.com/v1/ensemble"

    public static let defaults = Endpoints(
        forecast: "https://api.open-meteo.com/v1/forecast",
        archive: "https://archive-api.open-meteo.com/v1/archive",
        geocoding: "https://geocoding-api.open-meteo.com/v1/search",
        meta: "https://api.open-meteo.com/data",
        apiKey: nil,
        singleRuns: "https://single-runs-api.open-meteo.com/v1/forecast")

    public init(
        forecast: String, archive: String, geocoding: String, meta: String, apiKey: String?,
        singleRuns: String = "https://single-runs-api.open-meteo.com/v1/forecast"
    ) {
        self.singleRuns = singleRuns
        self.forecast = forecast
        self.archive = archive
        self.geocoding = geocoding
        self.meta = meta
        self.apiKey = apiKey
    }

    /// Reads `WXDB_FORECAST_URL`, `WXDB_ARCHIVE_URL`, `WXDB_GEOCODING_URL`, `WXDB_META_URL`,
    /// `WXDB_SINGLE_RUNS_URL`, `WXDB_ENSEMBLE_URL` and `WXDB_API_KEY`; `apiKey` (from `--api-key`) wins
    /// over the environment.
    public static func from(environment: [String: String], apiKey: String? = nil) -> Endpoints {
        func value(_ name: String, _ fallback: String) -> String {
            guard let v = environment[name], !v.isEmpty else { return fallback }
            return v
        }
        let key = apiKey ?? environment["WXDB_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        var endpoints = Endpoints(
            forecast: value("WXDB_FORECAST_URL", defaults.forecast),
            archive: value("WXDB_ARCHIVE_URL", defaults.archive),
            geocoding: value("WXDB_GEOCODING_URL", defaults.geocoding),
            meta: value("WXDB_META_URL", defaults.meta),
            apiKey: key,
            singleRuns: value("WXDB_SINGLE_RUNS_URL", defaults.singleRuns))
        endpoints.ensemble = value("WXDB_ENSEMBLE_URL", defaults.ensemble)
        return endpoints
    }

    /// Whether the free API's rate limits apply (no key).
    public var isFreeTier: Bool { apiKey == nil }

    /// `base` with `query` appended; with a key, the host gets the `customer-` prefix (Open-Meteo
    /// hosts only; a local test server keeps its address) and `apikey=` is added.
    public func url(_ base: String, _ query: [(String, String)]) throws -> URL {
        guard var components = URLComponents(string: base), components.scheme != nil, components.host != nil else {
            throw EndpointError.invalidBase(base)
        }
        var items = query.map { URLQueryItem(name: $0.0, value: $0.1) }
        if let apiKey {
            if let host = components.host, host.hasSuffix("open-meteo.com"), !host.hasPrefix("customer-") {
                components.host = "customer-" + host
            }
            items.append(URLQueryItem(name: "apikey", value: apiKey))
        }
        components.queryItems = items
        // Commas separate list values in Open-Meteo's syntax; keep them readable in logs.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacing("%2C", with: ",")
        guard let url = components.url else { throw EndpointError.invalidBase(base) }
        return url
    }
}

public enum EndpointError: Error, CustomStringConvertible {
    case invalidBase(String)
    public var description: String {
        switch self {
        case .invalidBase(let base):
            return "the endpoint '\(base)' is not a URL; check the WXDB_*_URL environment variables"
        }
    }
}

extension HTTPClient {
    /// The model's `meta.json`, asked once with a short timeout and no retry (it only refines what
    /// wxdb can do without it); nil when the model is a blend or unknown, or the answer is not JSON.
    func modelMeta(_ model: String, endpoints: Endpoints) async -> JSON? {
        guard let domain = ModelDomains.domains[model] ?? EnsembleModels.domains[model],
            let url = URL(string: endpoints.meta + "/" + domain + "/static/meta.json")
        else { return nil }
        let quick = HTTPClient(timeout: min(timeout, 10), retry: .none, userAgent: userAgent)
        guard let response = try? await quick.get(url) else { return nil }
        return try? JSONParser.parse(response.body)
    }
}
