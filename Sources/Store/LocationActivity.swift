import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the store holds about one location's fetching, for `stats` and `locations list`.
public struct LocationActivity: Sendable, Equatable {
    public var runs: Int
    public var fetches: Int
    /// Fetches whose content equalled a run already stored.
    public var repeated: Int
    public var failed: Int
    public var observations: Int
    /// The last attempt that did not fail.
    public var lastFetch: Int64?

    /// A location with nothing stored yet.
    public static let none = LocationActivity(
        runs: 0, fetches: 0, repeated: 0, failed: 0, observations: 0, lastFetch: nil)

    /// A value with every field given (engines build these from their rows).
    public init(runs: Int, fetches: Int, repeated: Int, failed: Int, observations: Int, lastFetch: Int64? = nil) {
        self.runs = runs
        self.fetches = fetches
        self.repeated = repeated
        self.failed = failed
        self.observations = observations
        self.lastFetch = lastFetch
    }
}
