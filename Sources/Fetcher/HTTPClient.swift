// The HTTP layer of the fetcher: one GET with a hard per-attempt deadline, classification of
// what came back, and retries with exponential backoff. The wire is a plain function
// (`HTTPTransport`, libcurl by default), so retries and budgets can be tested without a socket;
// the errors (FetchError.swift), the backoff (RetryPolicy.swift), the Open-Meteo body checks
// (OpenMeteoAnswer.swift) and the key scrubbing (Redaction.swift) live beside it.
//
// Decisions:
// - Redirects are NOT followed. The only redirect Open-Meteo documents is "apikey sent to the
//   free host → customer- host"; following it silently would hide a
//   misconfiguration and could carry the key to a host the user did not choose. A 3xx becomes
//   `FetchError.redirected` and is not retried.
// - Only 2xx responses are returned. 429, 5xx, transport errors, timeouts and unusable 2xx
//   bodies are retried; every other status is final.
// - `get` uses typed throws: it throws only `FetchError`.
// - No URL carrying `apikey=` ever reaches an error or an attempt record: both go through
//   `HTTPClient.redacted(_:)` / `scrub(_:)`, and every text the server sent (error reasons, quoted
//   bodies) has the key itself removed too, since a server may echo it ("Invalid key …").
// - A body larger than the limit (`defaultMaxBodyBytes`) is cut off as it arrives: the transfer is
//   cancelled, never buffered whole, so an endless body costs at most the limit in memory. The
//   limit counts decoded bytes: a gzip, brotli or zstd bomb stops at it too.
// - 429 and 503 wait what the server asks (`Retry-After`, or the next minute for Open-Meteo's
//   minutely limit) instead of backing off by milliseconds; the hourly and daily limits are not
//   retried at all. Waits go through an injectable sleeper, so tests count attempts, not seconds.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A successful (2xx) HTTP response.
public struct HTTPResponse: Sendable {
    /// HTTP status code (always 2xx when returned by `HTTPClient.get`).
    public let status: Int
    /// Response headers with lowercased names.
    public let headers: [String: String]
    /// The raw body.
    public let body: Data
    /// The requested URL with any `apikey` removed.
    public let url: String
    /// False when the connection was cut before the whole body came (only for a request that
    /// `keepsPartialBody`): `body` is the part that arrived.
    public let complete: Bool

    public init(status: Int, headers: [String: String], body: Data, url: String, complete: Bool = true) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.complete = complete
    }
}

/// GETs Open-Meteo URLs with a hard deadline per attempt and retries per `RetryPolicy`.
public final class HTTPClient: Sendable {
    /// The largest body accepted by default: 64 MiB. A 16-day forecast of 100 locations and one
    /// model (wxdb's largest batch) is about 3 MB, so this leaves room for several models or
    /// past days; callers that ask for more pass their own limit to `get`.
    public static let defaultMaxBodyBytes = 64 << 20

    public let timeout: TimeInterval
    public let retry: RetryPolicy
    public let userAgent: String
    /// The body limit of `get` when the caller gives none.
    public let maxBodyBytes: Int
    /// Whether a 2xx body must be JSON (Open-Meteo); false for the station archives' CSV and gzip.
    public let expectsJSON: Bool
    /// Waits between attempts (injected by tests, which count attempts instead of seconds).
    public let sleep: @Sendable (TimeInterval) async throws -> Void
    /// The wall clock, for `Retry-After` dates and the next minute of Open-Meteo's minutely limit.
    public let now: @Sendable () -> Date
    /// Sends one attempt.
    public let transport: HTTPTransport

    /// `Task.sleep` for `seconds`.
    public static let realSleep: @Sendable (TimeInterval) async throws -> Void = { seconds in
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }

    /// - Parameters:
    ///   - timeout: seconds per attempt, for the whole response (head and body), not just idle time.
    ///   - retry: backoff policy.
    ///   - userAgent: sent as `User-Agent` (Open-Meteo asks API users to identify themselves).
    ///   - maxBodyBytes: the largest body accepted; a larger one is cut off as it arrives.
    ///   - sleep, now: how to wait and what time it is (tests inject both).
    ///   - expectsJSON: whether a 2xx body that is not JSON is a broken answer worth retrying.
    ///   - transport: how one attempt is sent; libcurl unless a test hands in its own.
    public init(
        timeout: TimeInterval = 30, retry: RetryPolicy = .init(), userAgent: String,
        maxBodyBytes: Int = HTTPClient.defaultMaxBodyBytes,
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = HTTPClient.realSleep,
        now: @escaping @Sendable () -> Date = Date.init, expectsJSON: Bool = true,
        transport: HTTPTransport? = nil
    ) {
        self.expectsJSON = expectsJSON
        self.timeout = timeout
        self.retry = retry
        self.userAgent = userAgent
        self.maxBodyBytes = max(1, maxBodyBytes)
        self.sleep = sleep
        self.now = now
        // Connections are the client's own, as a URLSession's were: a new client starts on new ones.
        self.transport = transport ?? CurlTransport().transport
    }

    /// GET with retries; returns only 2xx responses with a plausible JSON body.
    public func get(_ url: URL, maxBodyBytes: Int? = nil) async throws(FetchError) -> HTTPResponse {
        try await get(url, maxBodyBytes: maxBodyBytes, onAttempt: { _ in })
    }

    /// GET with retries, reporting every attempt (success or failure) to `onAttempt` before the
    /// next one starts, so the caller can write a complete fetch log.
    /// `headers` go with every attempt (a `Range`); with `keepsPartialBody` a 2xx body cut short
    /// is returned as it is (`complete` false) rather than retried from the start.
    public func get(
        _ url: URL, maxBodyBytes: Int? = nil, headers extra: [(name: String, value: String)] = [],
        keepsPartialBody: Bool = false, onAttempt: (Attempt) -> Void
    ) async throws(FetchError) -> HTTPResponse {
        let clock = ContinuousClock()
        let limit = max(1, maxBodyBytes ?? self.maxBodyBytes)
        let secret = Self.apiKey(in: url)
        let shownURL = Self.redacted(url)
        let headers =
            [
                (name: "User-Agent", value: userAgent),
                (name: "Accept", value: expectsJSON ? "application/json" : "*/*")
            ] + extra

        var number = 0
        // Time used so far: attempts as measured plus waits as asked for (so an injected
        // sleeper that returns at once still sees the whole call bounded by maxTotal).
        var spent: TimeInterval = 0
        while true {
            number += 1
            // Clip the deadline so the whole call stays within maxTotal.
            let deadline = max(0.05, min(timeout, retry.maxTotal - spent))
            var request = HTTPRequest(url: url, headers: headers, deadline: deadline, maxBodyBytes: limit)
            request.keepsPartialBody = keepsPartialBody
            let startedAt = now()
            let t0 = clock.now
            var outcome = await once(request, shownURL: shownURL, secret: secret)
            let duration = Self.seconds(clock.now - t0)
            spent += duration

            let error: FetchError?
            switch outcome.result {
            case .success: error = nil
            case .failure(let e):
                error = e.scrubbed(secret)
                outcome.result = .failure(error!)
            }

            // Decide on a retry before reporting, so the log says what happens next. The wait
            // the server asks for, when it asks, else backoff; never past maxTotal.
            var wait: TimeInterval?
            if let error, error.isRetryable, number < retry.attempts, !Task.isCancelled {
                let d = outcome.serverWait ?? retry.delay(beforeRetry: number)
                if spent + d < retry.maxTotal { wait = d }
            }
            onAttempt(
                Attempt(
                    number: number, url: shownURL, startedAt: startedAt, duration: duration,
                    status: outcome.status, bytes: outcome.bytes, error: error, retryAfter: wait))

            switch outcome.result {
            case .success(let response): return response
            case .failure(let e):
                guard let wait else { throw e }
                do {
                    try await sleep(wait)
                } catch {
                    throw e  // cancelled while waiting: report the last real failure
                }
                spent += wait
            }
        }
    }

    private static func seconds(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }

    // MARK: One attempt

    private struct Outcome {
        var result: Result<HTTPResponse, FetchError>
        var status: Int?
        var bytes: Int
        /// The wait the server asked for before another try.
        var serverWait: TimeInterval?
    }

    /// Runs one request and classifies the answer.
    private func once(_ request: HTTPRequest, shownURL: String, secret: String?) async -> Outcome {
        let raw: Result<HTTPResponse, FetchError>
        if Task.isCancelled {
            raw = .failure(.transport("the request was cancelled"))
        } else {
            raw = await transport(request)
        }
        switch raw {
        case .failure(let error):
            return Outcome(result: .failure(error), status: nil, bytes: 0)
        case .success(let received):
            // The key out of the body itself, before any text is cut from it: a reason or a
            // decoder message clipped mid-key would otherwise show part of it.
            let body = Self.removing(secret, from: received.body)
            var headers = received.headers
            let status = received.status
            if body.count != received.body.count, headers["content-length"] == String(received.body.count) {
                headers["content-length"] = String(body.count)  // the length of what is handed on
            }
            let response = HTTPResponse(
                status: status, headers: headers, body: body, url: shownURL, complete: received.complete)
            // Only an error body is read for its reason: parsing a forecast body here as well
            // (megabytes for a batch) cost as much as decoding it and held it all in memory twice.
            let reason = (200..<300).contains(status) ? nil : Self.reason(body)
            let result: Result<HTTPResponse, FetchError>
            switch status {
            case 200..<300 where !received.complete && !body.isEmpty:
                result = .success(response)  // the caller asked for the part, to resume from it
            case 200..<300:
                if let problem = Self.bodyProblem(response, json: expectsJSON) {
                    result = .failure(.invalidBody(problem))
                } else {
                    result = .success(response)
                }
            case 300..<400:
                let location =
                    headers["location"].map { URL(string: $0).map(Self.redacted) ?? Self.scrub($0) }
                    ?? "an unknown location"
                result = .failure(.redirected(location))
            case 429:
                result = .failure(.rateLimited(reason: reason))
            default:
                result = .failure(.http(status: status, reason: reason))
            }
            return Outcome(
                result: result, status: status, bytes: body.count,
                serverWait: Self.serverWait(status: status, headers: headers, reason: reason, now: now()))
        }
    }
}
