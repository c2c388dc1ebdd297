import WxCore

/// Where a forecast came from.
public enum FetchOrigin: String, Sendable {
    case fetch
    case `import`
    /// A past run asked for by its initialisation time from the Single Runs API (`wxdb backfill`).
    case singleRun = "single_run"
}

/// What storing one model's forecast did.
public struct StoreOutcome: Sendable, Equatable {
    public enum Kind: String, Sendable { case stored, repeated }
    public var kind: Kind
    public var model: String
    public var runID: Int64
    public var hours: Int
    public var days: Int
    /// Hours a `repeated` outcome added to the run it continued (the window moved on); 0 otherwise.
    public var addedHours = 0
    /// Whether a stored run of the same model run took hours (or dates) it lacked: the window moved
    /// on, or another UTC offset cut the response differently (then `kind` is `repeated`).
    public var continued = false

    /// A value with every field given (engines build these from their rows).
    public init(
        kind: Kind, model: String, runID: Int64, hours: Int, days: Int, addedHours: Int = 0, continued: Bool = false
    ) {
        self.addedHours = addedHours
        self.continued = continued
        self.kind = kind
        self.model = model
        self.runID = runID
        self.hours = hours
        self.days = days
    }
}

/// The facts about one fetch that go into the fetch log beside the runs it produced.
public struct FetchRecord: Sendable {
    public var fetchedAt: Int64
    public var origin: FetchOrigin
    /// The request URL without any API key, or the imported file's path.
    public var request: String?
    public var httpStatus: Int?
    public var durationMilliseconds: Int?
    /// Model initialisation times from meta.json, by model name, where known.
    public var issuedAt: [String: Int64]
    /// This row's share of Open-Meteo's weighted call count (free-tier budgeting).
    public var apiWeight: Double?
    /// Also keep the response's past hours (valid at or before `fetchedAt`) as `analysis` observations.
    public var recordAnalysis: Bool

    public init(
        fetchedAt: Int64, origin: FetchOrigin, request: String? = nil, httpStatus: Int? = nil,
        durationMilliseconds: Int? = nil, issuedAt: [String: Int64] = [:], recordAnalysis: Bool = true,
        apiWeight: Double? = nil
    ) {
        self.apiWeight = apiWeight
        self.fetchedAt = fetchedAt
        self.origin = origin
        self.request = request
        self.httpStatus = httpStatus
        self.durationMilliseconds = durationMilliseconds
        self.issuedAt = issuedAt
        self.recordAnalysis = recordAnalysis
    }
}
