// How often and how long to retry: the backoff schedule, and the record of each try for the fetch log.
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        let exponential = baseDelay * Double(sign: .plus, exponent: max(0, retry - 1), significand: 1)
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
