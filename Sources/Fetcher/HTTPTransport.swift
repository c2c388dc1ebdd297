// The seam between the client's policy (retries, budget, classification) and the wire: one request
// in, one raw answer out. The client takes it as a plain function, so tests of retries and budgets
// hand it a closure and need no socket; `CurlTransport` is the real one.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One attempt's request, as the transport sends it.
public struct HTTPRequest: Sendable {
    /// The URL as sent (it may carry `apikey`; the transport never quotes it in an error).
    public var url: URL
    /// Extra request headers (`User-Agent`, `Accept`).
    public var headers: [(name: String, value: String)]
    /// Seconds for the whole attempt: connection, head and body, not an idle timeout.
    public var deadline: TimeInterval
    /// The largest decoded body accepted; a larger one is cut off as it arrives.
    public var maxBodyBytes: Int
    /// A 2xx body the connection cut short is handed back (`HTTPResponse.complete` false) instead
    /// of failing the attempt, so a download can ask for the rest with a `Range`.
    public var keepsPartialBody = false

    public init(url: URL, headers: [(name: String, value: String)], deadline: TimeInterval, maxBodyBytes: Int) {
        self.url = url
        self.headers = headers
        self.deadline = deadline
        self.maxBodyBytes = maxBodyBytes
    }
}

/// Sends one request and returns whatever HTTP answer came back (any status, redirects not
/// followed, the body decoded and at most `maxBodyBytes`), or why none did: `.timedOut` past the
/// deadline, `.tooLarge` past the body limit, `.transport` for everything else on the wire. It is
/// called again for each retry and must be safe to call from several tasks at once.
public typealias HTTPTransport = @Sendable (HTTPRequest) async -> Result<HTTPResponse, FetchError>
