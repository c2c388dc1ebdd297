import WxCore

/// What the fetch log says about one hour of a location: how many fetches (or imports) stored a new
/// run, returned content already stored, or failed.
public struct FetchHour: Sendable, Equatable {
    /// The hour, as Unix seconds at its start (UTC).
    public var hour: Int64
    public var stored: Int
    public var repeated: Int
    public var failed: Int

    /// A value with every field given (engines build these from their rows).
    public init(hour: Int64, stored: Int, repeated: Int, failed: Int) {
        self.hour = hour
        self.stored = stored
        self.repeated = repeated
        self.failed = failed
    }
}
