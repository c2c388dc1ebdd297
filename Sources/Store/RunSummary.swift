import WxCore

/// One stored forecast run of a location, as `wxdb query runs` lists it.
public struct RunSummary: Sendable, Equatable {
    public var id: Int64
    public var model: String
    /// Model initialisation time, or the first fetch of the content (see `issuedAtSource`).
    public var issuedAt: Int64
    /// `model_run` or `first_fetch`.
    public var issuedAtSource: String
    /// First and last successful fetch that returned this content.
    public var firstFetch: Int64
    public var lastFetch: Int64
    /// Fetches after the first that returned the same content (fetch_log outcome `repeated`).
    public var repeats: Int
    public var firstValidTime: Int64?
    public var lastValidTime: Int64?
    /// Hours the run had when stored (its rows are gone once pruned).
    public var hourCount: Int
    /// When `wxdb prune` removed the run's hourly and daily rows (its scores live on in
    /// `verification_summaries`); nil while the rows are stored.
    public var prunedAt: Int64?

    /// A value with every field given (engines build these from their rows).
    public init(
        id: Int64, model: String, issuedAt: Int64, issuedAtSource: String, firstFetch: Int64, lastFetch: Int64,
        repeats: Int, firstValidTime: Int64? = nil, lastValidTime: Int64? = nil, hourCount: Int, prunedAt: Int64? = nil
    ) {
        self.id = id
        self.model = model
        self.issuedAt = issuedAt
        self.issuedAtSource = issuedAtSource
        self.firstFetch = firstFetch
        self.lastFetch = lastFetch
        self.repeats = repeats
        self.firstValidTime = firstValidTime
        self.lastValidTime = lastValidTime
        self.hourCount = hourCount
        self.prunedAt = prunedAt
    }
}

/// One run's value of a variable for one valid hour (`Store.forecasts(locationID:validTime:...)`).
public struct HourForecast: Sendable, Equatable {
    public var runID: Int64
    public var model: String
    public var issuedAt: Int64
    public var value: Double?

    /// A value with every field given (engines build these from their rows).
    public init(runID: Int64, model: String, issuedAt: Int64, value: Double? = nil) {
        self.runID = runID
        self.model = model
        self.issuedAt = issuedAt
        self.value = value
    }
}
