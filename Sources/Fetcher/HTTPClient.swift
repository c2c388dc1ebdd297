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
//   `HTTPClient.redacted(_:)` / `scrub(_:)`.
import Foundation
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

    /// Whether another attempt may succeed: transport problems, timeouts, 429, 5xx and broken
    /// 2xx bodies are typically transient; other 4xx and redirects will fail the same way again.
    public var isRetryable: Bool {
        switch self {
        case .transport, .timedOut, .rateLimited, .invalidBody: return true
        case .http(let status, _): return status >= 500
        case .redirected: return false
        }
    }

    public var description: String {
        switch self {
        case .transport(let message):
            return "Could not reach Open-Meteo: \(message). wxdb retries connection problems automatically; check the network connection and the configured base URL, then try again."
        case .timedOut(let seconds):
            return "Open-Meteo did not answer within \(Self.format(seconds)) s. wxdb retries timeouts automatically; the service may be slow or unreachable, so try again later or raise the timeout."
        case .http(let status, let reason):
            let detail = reason.map { ": \($0)" } ?? ""
            if status >= 500 {
                return "Open-Meteo had a server error (HTTP \(status)\(detail)). This is usually temporary and wxdb retries it; if it persists, try again later."
            }
            return "Open-Meteo rejected the request (HTTP \(status)\(detail)). wxdb does not retry this; check the locations, variables and options of the request."
        case .rateLimited(let reason):
            let detail = reason ?? "no reason given"
            return "Open-Meteo refused the request: rate limit reached (\(detail)). wxdb retries with backoff, but the limit resets only after a minute, an hour or a day; wait, or reduce locations, variables or fetch frequency."
        case .redirected(let location):
            return "Open-Meteo redirected the request to \(location). wxdb does not follow redirects; this usually means an API key was sent to the free host: use the customer- host for commercial keys, or check the configured base URL."
        case .invalidBody(let message):
            return "Open-Meteo answered, but the response is unusable: \(message). This usually is a server or proxy problem and wxdb retries it; if it persists, try again later."
        }
    }

    private static func format(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(format: "%.2f", s)
    }
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
    /// Upper bound for the whole call, attempts and waits together.
    public var maxTotal: TimeInterval
    /// Fraction 0...1 of each delay that is randomized away (spreads simultaneous clients).
    public var jitter: Double

    public init(attempts: Int = 4, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 8,
                maxTotal: TimeInterval = 60, jitter: Double = 0.5) {
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
    public let timeout: TimeInterval
    public let retry: RetryPolicy
    public let userAgent: String
    private let session: URLSession
    private let delegate: SessionDelegate

    /// - Parameters:
    ///   - timeout: seconds per attempt, for the whole response (head and body), not just idle time.
    ///   - retry: backoff policy.
    ///   - userAgent: sent as `User-Agent` (Open-Meteo asks API users to identify themselves).
    public init(timeout: TimeInterval = 30, retry: RetryPolicy = .init(), userAgent: String) {
        self.timeout = timeout
        self.retry = retry
        self.userAgent = userAgent
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
    public func get(_ url: URL) async throws(FetchError) -> HTTPResponse {
        try await get(url, onAttempt: { _ in })
    }

    /// GET with retries, reporting every attempt (success or failure) to `onAttempt` before the
    /// next one starts, so the caller can write a complete fetch log.
    public func get(_ url: URL, onAttempt: (Attempt) -> Void) async throws(FetchError) -> HTTPResponse {
        let clock = ContinuousClock()
        let start = clock.now
        let shownURL = Self.redacted(url)
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        request.timeoutInterval = max(1, timeout.rounded(.up))  // see init: whole seconds only
        request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
        request.setValue("application/json", forHTTPHeaderField: "Accept")

        var number = 0
        while true {
            number += 1
            let elapsed = Self.seconds(clock.now - start)
            // Clip the deadline so the whole call stays within maxTotal.
            let deadline = max(0.05, min(timeout, retry.maxTotal - elapsed))
            let startedAt = Date()
            let t0 = clock.now
            let outcome = await once(request, deadline: deadline, shownURL: shownURL)
            let duration = Self.seconds(clock.now - t0)

            let error: FetchError?
            switch outcome.result {
            case .success: error = nil
            case .failure(let e): error = e
            }

            // Decide on a retry before reporting, so the log says what happens next.
            var wait: TimeInterval?
            if let error, error.isRetryable, number < retry.attempts, !Task.isCancelled {
                let d = retry.delay(beforeRetry: number)
                if Self.seconds(clock.now - start) + d < retry.maxTotal { wait = d }
            }
            onAttempt(Attempt(number: number, url: shownURL, startedAt: startedAt, duration: duration,
                              status: outcome.status, bytes: outcome.bytes, error: error, retryAfter: wait))

            switch outcome.result {
            case .success(let response): return response
            case .failure(let e):
                guard let wait else { throw e }
                do {
                    try await Task.sleep(nanoseconds: UInt64(wait * 1_000_000_000))
                } catch {
                    throw e  // cancelled while waiting: report the last real failure
                }
            }
        }
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
        text.replacingOccurrences(of: "[?&]?apikey=[^&\\s\"'<>]*", with: "",
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
    }

    /// Runs one request and classifies the answer.
    private func once(_ request: URLRequest, deadline: TimeInterval, shownURL: String) async -> Outcome {
        let raw = await transfer(request, deadline: deadline)
        switch raw {
        case .failure(let error):
            return Outcome(result: .failure(error), status: nil, bytes: 0)
        case .success(let (http, body)):
            var headers: [String: String] = [:]
            for (k, v) in http.allHeaderFields {
                headers[String(describing: k).lowercased()] = String(describing: v)
            }
            let status = http.statusCode
            let response = HTTPResponse(status: status, headers: headers, body: body, url: shownURL)
            let result: Result<HTTPResponse, FetchError>
            switch status {
            case 200..<300:
                if let problem = Self.bodyProblem(response) { result = .failure(.invalidBody(problem)) } else { result = .success(response) }
            case 300..<400:
                let location = headers["location"].map { URL(string: $0).map(Self.redacted) ?? Self.scrub($0) } ?? "an unknown location"
                result = .failure(.redirected(location))
            case 429:
                result = .failure(.rateLimited(reason: Self.reason(body)))
            default:
                result = .failure(.http(status: status, reason: Self.reason(body)))
            }
            return Outcome(result: result, status: status, bytes: body.count)
        }
    }

    /// A cheap plausibility check, not a parse: decoding is the caller's job, but broken bodies
    /// that a retry can fix must be caught here, where retries happen.
    static func bodyProblem(_ r: HTTPResponse) -> String? {
        if let declared = r.headers["content-length"].flatMap(Int.init), declared != r.body.count {
            return "the body was cut off (\(r.body.count) of \(declared) bytes)"
        }
        if r.body.isEmpty { return "the body is empty" }
        if let type = r.headers["content-type"], !type.lowercased().contains("json") {
            return "expected JSON but got \(type)"
        }
        let marker = Data("Unexpected error while streaming data".utf8)
        if let range = r.body.range(of: marker) {
            let text = String(decoding: r.body[range.lowerBound...].prefix(200), as: UTF8.self)
            return "the server failed while sending data (\(scrub(text)))"
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = r.body.first(where: { !isSpace($0) }), let last = r.body.last(where: { !isSpace($0) }),
              (first == UInt8(ascii: "{") && last == UInt8(ascii: "}")) || (first == UInt8(ascii: "[") && last == UInt8(ascii: "]"))
        else { return "the body is not a complete JSON document" }
        return nil
    }

    /// The `reason` of an Open-Meteo error body `{"error":true,"reason":"…"}`, if it is one.
    static func reason(_ body: Data) -> String? {
        guard let obj = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        return (obj["reason"] as? String).map(scrub)
    }

    /// Starts the data task and waits for whichever comes first: completion, the deadline or
    /// cancellation of the calling task. The deadline is our own timer because URLSession's
    /// request timeout is an *idle* timeout: a body trickling in slowly would never trip it.
    private func transfer(_ request: URLRequest, deadline: TimeInterval) async -> Result<(HTTPURLResponse, Data), FetchError> {
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        let delegate = self.delegate
        let timeout = self.timeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<(HTTPURLResponse, Data), FetchError>, Never>) in
                delegate.register(id) { result in continuation.resume(returning: result) }
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
        let done: Done
        init(done: @escaping Done) { self.done = done }
    }

    private let lock = NSLock()
    private var pending: [Int: Pending] = [:]
    /// Reported in `.timedOut` when URLSession's own idle timeout fires first.
    private let timeout: TimeInterval

    init(timeout: TimeInterval) {
        self.timeout = timeout
    }

    func register(_ id: Int, done: @escaping Done) {
        lock.withLock { pending[id] = Pending(done: done) }
    }

    /// Resolves the waiter if still pending. Returns false if someone else already did.
    @discardableResult
    func finish(_ id: Int, with result: Result<(HTTPURLResponse, Data), FetchError>) -> Bool {
        guard let p = lock.withLock({ pending.removeValue(forKey: id) }) else { return false }
        p.done(result)
        return true
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.withLock { pending[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { pending[dataTask.taskIdentifier]?.data.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
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
