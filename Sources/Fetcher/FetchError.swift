// What a fetch can fail with, worded for the user, and which failures another attempt may mend.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// Whole seconds as they are, others to two decimals (`0.25`): the timeout as the user gave it.
    static func format(_ s: Double) -> String {
        if s == s.rounded() { return String(Int(s)) }
        let hundredths = Int((s * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + String(fraction)
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
