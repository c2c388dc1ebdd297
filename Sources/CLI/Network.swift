import Foundation
import WxFetcher

extension Context {
    /// Endpoints from the environment, with `--api-key` over `WXDB_API_KEY`.
    var endpoints: Endpoints {
        Endpoints.from(environment: environment, apiKey: parsed.value("api-key"))
    }

    /// The HTTP client: timeout from `--timeout` (or `WXDB_TIMEOUT`), attempts from `--attempts`.
    func httpClient() throws -> HTTPClient {
        let timeout = try parsed.double("timeout", in: 0.1...600)
            ?? environment["WXDB_TIMEOUT"].flatMap(Double.init) ?? 30
        var retry = RetryPolicy()
        if let attempts = try parsed.int("attempts", in: 1...10) { retry.attempts = attempts }
        if let base = environment["WXDB_RETRY_BASE_DELAY"].flatMap(Double.init) { retry.baseDelay = base }
        retry.maxTotal = max(retry.maxTotal, timeout * Double(retry.attempts) + 30)
        return HTTPClient(timeout: timeout, retry: retry, userAgent: "wxdb/\(WXDB.version)",
                          sleep: sleep, now: { [self] in self.now() })
    }

    /// `text` without the API key: the last guard before a message reaches the terminal, since
    /// server texts quoted in errors may carry it.
    func withoutAPIKey(_ text: String) -> String {
        HTTPClient.scrub(text, secret: endpoints.apiKey)
    }
}

/// Options for commands that talk to Open-Meteo.
let networkOptions: [OptionSpec] = [
    .option("timeout", "seconds", "Time allowed for each HTTP request.", default: "30"),
    .option("attempts", "n", "Attempts per request on transport errors, 429 and 5xx.", default: "4"),
]
