// The HTTP layer of the fetcher: one GET with a hard per-attempt deadline, classification of
// what came back, and retries with exponential backoff. Foundation only (no WxCore), so it can be
// tested against the replay server without any domain types.
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
//   cancelled, never buffered whole, so an endless body costs at most the limit in memory.
// - 429 and 503 wait what the server asks (`Retry-After`, or the next minute for Open-Meteo's
//   minutely limit) instead of backing off by milliseconds; the hourly and daily limits are not
//   retried at all. Waits go through an injectable sleeper, so tests count attempts, not seconds.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
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

    public init(status: Int, headers: [String: String], body: Data, url: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }
}

/// Why a fetch failed. Descriptions are user-facing: what happened and what to do.
public enum FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection failed (DNS, refused, reset, truncated transfer ...).
    case transport(String)
    /// No complete response within the per-attempt deadline.
    case timedOut(seconds: Double)
    /// A non-2xx status other than 429; `reason` comes from an Open-Meteo error body if present.
    case http(status: Int, reason: String?)
    /// HTTP 429; `reason` is Open-Meteo's text (minutely, hourly or daily limit).
    case rateLimited(reason: String?)
    /// A 3xx answer; wxdb does not follow redirects. Carries the redacted Location.
    case redirected(String)
    /// A 2xx answer whose body is not usable JSON (empty, HTML, truncated, streaming error).
    case invalidBody(String)
    /// The body grew past the limit (bytes) and the transfer was cut off.
    case tooLarge(limit: Int)

    /// Whether another attempt may succeed: transport problems, timeouts, 429, 5xx and broken
    /// 2xx bodies are typically transient; other 4xx and redirects will fail the same way again.
    public var isRetryable: Bool {
        switch self {
        case .transport, .timedOut, .invalidBody: return true
        // The hourly and daily limits outlast any retry; the minutely one is waited out.
        case .rateLimited(let reason): return RateLimitWindow(reason: reason).isRetryable
        case .http(let status, _): return status >= 500
        // The same server sends the same oversized answer again.
        case .redirected, .tooLarge: return false
        }
    }

    public var description: String {
        switch self {
        case .transport(let message):
            return
                "Could not reach Open-Meteo: \(message). wxdb retries connection problems automatically; check the network connection and the configured base URL, then try again."
        case .timedOut(let seconds):
            return
                "Open-Meteo did not answer within \(Self.format(seconds)) s. wxdb retries timeouts automatically; the service may be slow or unreachable, so try again later or raise the timeout."
        case .http(let status, let reason):
            let detail = reason.map { ": \($0)" } ?? ""
            if status >= 500 {
                return
                    "Open-Meteo had a server error (HTTP \(status)\(detail)). This is usually temporary and wxdb retries it; if it persists, try again later."
            }
            return
                "Open-Meteo rejected the request (HTTP \(status)\(detail)). wxdb does not retry this; check the locations, variables and options of the request."
        case .rateLimited(let reason):
            let detail = reason ?? "no reason given"
            switch RateLimitWindow(reason: reason) {
            case .minute:
                return
                    "Open-Meteo refused the request: minutely rate limit reached (\(detail)). wxdb waits for the next minute before trying again; if it persists, reduce locations, variables or fetch frequency."
            case .hour:
                return
                    "Open-Meteo refused the request: hourly rate limit reached (\(detail)). wxdb does not retry this; try again next hour, or reduce locations, variables or fetch frequency."
            case .day:
                return
                    "Open-Meteo refused the request: daily rate limit reached (\(detail)). wxdb does not retry this; try again tomorrow, or reduce locations, models or fetch frequency (or use an API key)."
            case .other:
                return
                    "Open-Meteo refused the request: rate limit reached (\(detail)). wxdb retries after the wait the server asks for, or with backoff; if it persists, wait, or reduce locations, variables or fetch frequency."
            }
        case .redirected(let location):
            return
                "Open-Meteo redirected the request to \(location). wxdb does not follow redirects; this usually means an API key was sent to the free host: use the customer- host for commercial keys, or check the configured base URL."
        case .invalidBody(let message):
            return
                "Open-Meteo answered, but the response is unusable: \(message). This usually is a server or proxy problem and wxdb retries it; if it persists, try again later."
        case .tooLarge(let limit):
            return
                "Open-Meteo's answer grew past \(Self.mebibytes(limit)), wxdb's limit for one response, and was cut off; nothing from it was stored. A real answer is far smaller, so this is a server or proxy fault; try again later, or ask for fewer locations, models or days at a time."
        }
    }

    /// The same error with `secret` (an API key) removed from every text the server supplied.
    func scrubbed(_ secret: String?) -> FetchError {
        guard let secret, !secret.isEmpty else { return self }
        let clean = { (text: String) in HTTPClient.scrub(text, secret: secret) }
        switch self {
        case .transport(let m): return .transport(clean(m))
        case .http(let status, let reason): return .http(status: status, reason: reason.map(clean))
        case .rateLimited(let reason): return .rateLimited(reason: reason.map(clean))
        case .redirected(let location): return .redirected(clean(location))
        case .invalidBody(let m): return .invalidBody(clean(m))
        case .timedOut, .tooLarge: return self
        }
    }

    static func mebibytes(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    private static func format(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(format: "%.2f", s)
    }
}

/// Which of Open-Meteo's limits a 429 names (reference §5.2: "Minutely/Hourly/Daily API request
/// limit exceeded"; "Too many concurrent requests" is none of them).
public enum RateLimitWindow: Sendable, Equatable {
    case minute, hour, day, other

    public init(reason: String?) {
        let text = (reason ?? "").lowercased()
        if text.contains("minutely") || text.contains("one minute") {
            self = .minute
        } else if text.contains("hourly") || text.contains("next hour") {
            self = .hour
        } else if text.contains("daily") || text.contains("tomorrow") {
            self = .day
        } else {
            self = .other
        }
    }

    var isRetryable: Bool { self == .minute || self == .other }
}

/// Exponential backoff with jitter.
///
/// The delay before retry *n* (n = 1 after the first failed attempt) is
/// `min(maxDelay, baseDelay × 2^(n−1))`, reduced by a random fraction of up to `jitter`
/// (`jitter` 1 = full jitter, 0 = none). No retry starts once `maxTotal` seconds have passed
/// since the first attempt, and each attempt's deadline is clipped to what is left of it.
public struct RetryPolicy: Sendable, Equatable {
    /// Total attempts including the first (1 = never retry).
    public var attempts: Int
    public var baseDelay: TimeInterval
    public var maxDelay: TimeInterval
    /// Upper bound for the whole call, attempts and waits together: a wait the server asks for
    /// that would go past it is not made (the call fails with the server's answer instead).
    public var maxTotal: TimeInterval
    /// Fraction 0...1 of each delay that is randomized away (spreads simultaneous clients).
    public var jitter: Double

    public init(
        attempts: Int = 4, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 8,
        maxTotal: TimeInterval = 60, jitter: Double = 0.5
    ) {
        self.attempts = max(1, attempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.maxTotal = max(0, maxTotal)
        self.jitter = min(1, max(0, jitter))
    }

    /// Never retries.
    public static let none = RetryPolicy(attempts: 1)

    /// The wait before retry number `retry` (1-based). `random` is in 0..<1.
    public func delay(beforeRetry retry: Int, random: Double = Double.random(in: 0..<1)) -> TimeInterval {
        let exponential = baseDelay * pow(2, Double(max(0, retry - 1)))
        let capped = min(maxDelay, exponential)
        return capped * (1 - jitter * random)
    }
}

/// One try of a request, reported to the caller for the fetch log.
public struct Attempt: Sendable {
    /// 1-based attempt number.
    public let number: Int
    /// The URL with `apikey` removed.
    public let url: String
    public let startedAt: Date
    /// Seconds from sending to the final byte or the failure.
    public let duration: TimeInterval
    /// HTTP status if a response head arrived.
    public let status: Int?
    /// Body bytes received.
    public let bytes: Int
    /// Nil when this attempt succeeded.
    public let error: FetchError?
    /// The wait before the next attempt, or nil if this was the last one.
    public let retryAfter: TimeInterval?
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
    private let session: URLSession
    private let delegate: SessionDelegate

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
    public init(
        timeout: TimeInterval = 30, retry: RetryPolicy = .init(), userAgent: String,
        maxBodyBytes: Int = HTTPClient.defaultMaxBodyBytes,
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = HTTPClient.realSleep,
        now: @escaping @Sendable () -> Date = Date.init, expectsJSON: Bool = true
    ) {
        self.expectsJSON = expectsJSON
        self.timeout = timeout
        self.retry = retry
        self.userAgent = userAgent
        self.maxBodyBytes = max(1, maxBodyBytes)
        self.sleep = sleep
        self.now = now
        // Ephemeral: no cookies, no disk cache; a forecast store must see what the server sent now.
        let config = URLSessionConfiguration.ephemeral
        // FoundationNetworking (Linux) truncates these to whole seconds, and a sub-second value
        // becomes 0, which fails every request at once. Round up: the exact per-attempt
        // deadline is enforced by our own timer in `transfer`, these are only a backstop.
        let urlSessionTimeout = max(1, timeout.rounded(.up))
        config.timeoutIntervalForRequest = urlSessionTimeout
        config.timeoutIntervalForResource = urlSessionTimeout
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.urlCache = nil
        config.httpCookieStorage = nil
        let delegate = SessionDelegate(timeout: timeout)
        self.delegate = delegate
        self.session = URLSession(configuration: config, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        // Breaks the session → delegate retain cycle once in-flight tasks are done.
        session.finishTasksAndInvalidate()
    }

    /// GET with retries; returns only 2xx responses with a plausible JSON body.
    public func get(_ url: URL, maxBodyBytes: Int? = nil) async throws(FetchError) -> HTTPResponse {
        try await get(url, maxBodyBytes: maxBodyBytes, onAttempt: { _ in })
    }

    /// GET with retries, reporting every attempt (success or failure) to `onAttempt` before the
    /// next one starts, so the caller can write a complete fetch log.
    public func get(_ url: URL, maxBodyBytes: Int? = nil, onAttempt: (Attempt) -> Void) async throws(FetchError)
        -> HTTPResponse
    {
        let clock = ContinuousClock()
        let limit = max(1, maxBodyBytes ?? self.maxBodyBytes)
        let secret = Self.apiKey(in: url)
        let shownURL = Self.redacted(url)
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        request.timeoutInterval = max(1, timeout.rounded(.up))  // see init: whole seconds only
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        request.setValue(expectsJSON ? "application/json" : "*/*", forHTTPHeaderField: "Accept")

        var number = 0
        // Time used so far: attempts as measured plus waits as asked for (so an injected
        // sleeper that returns at once still sees the whole call bounded by maxTotal).
        var spent: TimeInterval = 0
        while true {
            number += 1
            // Clip the deadline so the whole call stays within maxTotal.
            let deadline = max(0.05, min(timeout, retry.maxTotal - spent))
            let startedAt = now()
            let t0 = clock.now
            var outcome = await once(request, deadline: deadline, shownURL: shownURL, limit: limit, secret: secret)
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

    /// The value of the URL's `apikey` query item, if any: the text to scrub from server answers.
    static func apiKey(in url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name.lowercased() == "apikey" }?.value.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `text` with every occurrence of `secret` (as sent and percent-encoded) and any `apikey=…`
    /// removed: for texts that came from a server, which may quote the key back.
    public static func scrub(_ text: String, secret: String?) -> String {
        var out = scrub(text)
        guard let secret, !secret.isEmpty else { return out }
        var forms = [secret]
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret {
            forms.append(encoded)
        }
        for form in forms { out = out.replacingOccurrences(of: form, with: "[API key]") }
        return out
    }

    /// Where `needle` first occurs in `haystack` at or after `start`. memchr and memcmp, not `Data.range(of:)`:
    /// corelibs Foundation's search is byte by byte through NSData, and every answer (megabytes
    /// for a batch of 100 locations) is searched twice.
    static func firstRange(of needle: Data, in haystack: Data, from start: Data.Index? = nil) -> Range<Data.Index>? {
        let start = start ?? haystack.startIndex
        guard !needle.isEmpty, start <= haystack.endIndex else { return nil }
        return haystack.withUnsafeBytes { (all: UnsafeRawBufferPointer) -> Range<Data.Index>? in
            needle.withUnsafeBytes { (sought: UnsafeRawBufferPointer) -> Range<Data.Index>? in
                guard let base = all.baseAddress, let key = sought.baseAddress else { return nil }
                let first = Int32(sought[0])
                var offset = start - haystack.startIndex
                while all.count - offset >= sought.count,
                    let hit = memchr(base + offset, first, all.count - offset - sought.count + 1)
                {
                    offset = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(hit, key, sought.count) == 0 {
                        return haystack.startIndex + offset..<haystack.startIndex + offset + sought.count
                    }
                    offset += 1
                }
                return nil
            }
        }
    }

    /// `body` with every occurrence of `secret` (as sent and percent-encoded) replaced by
    /// `[API key]`; the same bytes when it holds none (the usual case costs one search).
    static func removing(_ secret: String?, from body: Data) -> Data {
        guard let secret, !secret.isEmpty else { return body }
        var forms = [Data(secret.utf8)]
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret {
            forms.append(Data(encoded.utf8))
        }
        var out = body
        let mask = Data("[API key]".utf8)
        for form in forms {
            var searchFrom = out.startIndex
            while let range = firstRange(of: form, in: out, from: searchFrom) {
                out.replaceSubrange(range, with: mask)
                searchFrom = range.lowerBound + mask.count
            }
        }
        return out
    }

    /// How long the server asked to wait before the next try: `Retry-After` (seconds or an HTTP
    /// date), else for Open-Meteo's minutely limit the start of the next minute (plus a second of
    /// margin, as wxdb's own budget does); nil when it did not say.
    static func serverWait(status: Int, headers: [String: String], reason: String?, now: Date) -> TimeInterval? {
        guard status == 429 || status == 503 else { return nil }
        if let value = headers["retry-after"]?.trimmingCharacters(in: .whitespaces) {
            if let seconds = Double(value), seconds.isFinite { return max(0, seconds) }
            if let date = httpDate(value) { return max(0, date.timeIntervalSince(now)) }
        }
        if status == 429, RateLimitWindow(reason: reason) == .minute {
            let t = now.timeIntervalSince1970
            return 60 - t.truncatingRemainder(dividingBy: 60) + 1
        }
        return nil
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form `Retry-After` dates take.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }

    /// Removes every `apikey` query item (any case) so the key never lands in logs or errors.
    public static func redacted(_ url: URL) -> String {
        guard var comps = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return scrub(url.absoluteString)
        }
        if let items = comps.percentEncodedQueryItems {
            let kept = items.filter { $0.name.lowercased() != "apikey" }
            comps.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        }
        return comps.string ?? scrub(url.absoluteString)
    }

    /// Removes `apikey=…` from free text (error messages from the URL loading system can quote
    /// the URL).
    static func scrub(_ text: String) -> String {
        text.replacingOccurrences(
            of: "[?&]?apikey=[^&\\s\"'<>]*", with: "",
            options: [.regularExpression, .caseInsensitive])
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
    private func once(_ request: URLRequest, deadline: TimeInterval, shownURL: String, limit: Int, secret: String?)
        async -> Outcome
    {
        let raw = await transfer(request, deadline: deadline, limit: limit)
        switch raw {
        case .failure(let error):
            return Outcome(result: .failure(error), status: nil, bytes: 0)
        case .success(let (http, received)):
            // The key out of the body itself, before any text is cut from it: a reason or a
            // decoder message clipped mid-key would otherwise show part of it.
            let body = Self.removing(secret, from: received)
            var headers: [String: String] = [:]
            for (k, v) in http.allHeaderFields {
                headers[String(describing: k).lowercased()] = String(describing: v)
            }
            let status = http.statusCode
            if body.count != received.count, headers["content-length"] == String(received.count) {
                headers["content-length"] = String(body.count)  // the length of what is handed on
            }
            let response = HTTPResponse(status: status, headers: headers, body: body, url: shownURL)
            // Only an error body is read for its reason: parsing a forecast body here as well
            // (megabytes for a batch) cost as much as decoding it and held it all in memory twice.
            let reason = (200..<300).contains(status) ? nil : Self.reason(body)
            let result: Result<HTTPResponse, FetchError>
            switch status {
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

    /// A cheap plausibility check, not a parse: decoding is the caller's job, but broken bodies
    /// that a retry can fix must be caught here, where retries happen.
    static func bodyProblem(_ r: HTTPResponse, json: Bool = true) -> String? {
        if let declared = r.headers["content-length"].flatMap(Int.init), declared != r.body.count {
            return "the body was cut off (\(r.body.count) of \(declared) bytes)"
        }
        if r.body.isEmpty { return "the body is empty" }
        if !json { return nil }
        if let type = r.headers["content-type"], !type.lowercased().contains("json") {
            return "expected JSON but got \(type)"
        }
        let marker = Data("Unexpected error while streaming data".utf8)
        if let range = firstRange(of: marker, in: r.body) {
            let text = String(decoding: r.body[range.lowerBound...].prefix(200), as: UTF8.self)
            return "the server failed while sending data (\(scrub(text)))"
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = r.body.first(where: { !isSpace($0) }), let last = r.body.last(where: { !isSpace($0) }),
            (first == UInt8(ascii: "{") && last == UInt8(ascii: "}"))
                || (first == UInt8(ascii: "[") && last == UInt8(ascii: "]"))
        else { return "the body is not a complete JSON document" }
        return nil
    }

    /// The `reason` of an Open-Meteo error body `{"error":true,"reason":"…"}`, if it is one.
    static func reason(_ body: Data) -> String? {
        guard let obj = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        // Clipped: a hostile reason must not flood the terminal or the fetch log.
        return (obj["reason"] as? String).map { text in
            let clean = scrub(text)
            return clean.count > 200 ? String(clean.prefix(200)) + "… (\(clean.utf8.count) bytes)" : clean
        }
    }

    /// Starts the data task and waits for whichever comes first: completion, the deadline or
    /// cancellation of the calling task. The deadline is our own timer because URLSession's
    /// request timeout is an *idle* timeout: a body trickling in slowly would never trip it.
    private func transfer(_ request: URLRequest, deadline: TimeInterval, limit: Int) async -> Result<
        (HTTPURLResponse, Data), FetchError
    > {
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        let delegate = self.delegate
        let timeout = self.timeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<(HTTPURLResponse, Data), FetchError>, Never>) in
                delegate.register(id, limit: limit) { result in continuation.resume(returning: result) }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + deadline) {
                    // `finish` wins only if the task has not completed; then cancel it.
                    if delegate.finish(id, with: .failure(.timedOut(seconds: min(timeout, deadline)))) { task.cancel() }
                }
            }
        } onCancel: {
            if delegate.finish(id, with: .failure(.transport("the request was cancelled"))) { task.cancel() }
        }
    }
}

/// Collects each task's response and body and resolves its waiter exactly once. Delegate
/// callbacks (instead of completion handlers) are needed to refuse redirects on Linux, where
/// completion-handler tasks follow them without asking the delegate.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    typealias Done = @Sendable (Result<(HTTPURLResponse, Data), FetchError>) -> Void

    private final class Pending {
        var response: HTTPURLResponse?
        var data = Data()
        let limit: Int
        let done: Done
        init(limit: Int, done: @escaping Done) {
            self.limit = limit
            self.done = done
        }
    }

    private let lock = NSLock()
    private var pending: [Int: Pending] = [:]
    /// Reported in `.timedOut` when URLSession's own idle timeout fires first.
    private let timeout: TimeInterval

    init(timeout: TimeInterval) {
        self.timeout = timeout
    }

    func register(_ id: Int, limit: Int, done: @escaping Done) {
        lock.withLock { pending[id] = Pending(limit: limit, done: done) }
    }

    /// Resolves the waiter if still pending. Returns false if someone else already did.
    @discardableResult
    func finish(_ id: Int, with result: Result<(HTTPURLResponse, Data), FetchError>) -> Bool {
        guard let p = lock.withLock({ pending.removeValue(forKey: id) }) else { return false }
        p.done(result)
        return true
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        let limit = lock.withLock { () -> Int? in
            pending[id]?.response = response as? HTTPURLResponse
            return pending[id]?.limit
        }
        // A declared length past the limit is refused before a byte of the body arrives.
        if let limit, response.expectedContentLength > Int64(limit), finish(id, with: .failure(.tooLarge(limit: limit)))
        {
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        // Counted as it arrives: past the limit the transfer stops, so an endless body costs
        // at most the limit in memory.
        let over = lock.withLock { () -> Int? in
            guard let p = pending[id] else { return nil }
            if p.data.count + data.count > p.limit { return p.limit }
            p.data.append(data)
            return nil
        }
        if let over, finish(id, with: .failure(.tooLarge(limit: over))) { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // nil = do not follow; the 3xx itself completes the task and is classified by the client.
        // On Linux, FoundationNetworking traps ("Received callback for HTTP redirection, but we're
        // not waiting for it") when this answer arrives after the task was cancelled. Both this
        // answer and `cancel()` are queued on the task's own serial queue, so answering under the
        // lock that `finish` takes orders them: a task whose waiter is already resolved (and is
        // being cancelled) gets no answer at all; otherwise the answer is queued before any cancel.
        lock.withLock {
            if pending[task.taskIdentifier] != nil { completionHandler(nil) }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let id = task.taskIdentifier
        let (response, data) = lock.withLock { (pending[id]?.response, pending[id]?.data ?? Data()) }
        if let error {
            finish(id, with: .failure(Self.classify(error, timeout: timeout)))
        } else if let response = response ?? (task.response as? HTTPURLResponse) {
            finish(id, with: .success((response, data)))
        } else {
            finish(id, with: .failure(.transport("the server sent no HTTP response")))
        }
    }

    /// Maps URL loading errors to FetchError without the URL (which may contain the key).
    static func classify(_ error: Error, timeout: TimeInterval) -> FetchError {
        if let u = error as? URLError {
            switch u.code {
            case .timedOut: return .timedOut(seconds: timeout)
            case .cannotConnectToHost: return .transport("connection refused")
            case .networkConnectionLost: return .transport("the connection was lost before the response was complete")
            case .cannotFindHost, .dnsLookupFailed: return .transport("the host name could not be resolved")
            case .notConnectedToInternet: return .transport("no network connection")
            case .cancelled: return .transport("the request was cancelled")
            default: return .transport("\(HTTPClient.scrub(u.localizedDescription)) (URLError \(u.code.rawValue))")
            }
        }
        let ns = error as NSError
        return .transport("\(HTTPClient.scrub(ns.localizedDescription)) (\(ns.domain) \(ns.code))")
    }
}
