import WxCore

/// Which pairs to read: one location and source, valid times in `[from, to)`, one model or all.
public struct PairFilter: Sendable {
    public var locationID: Int64
    public var source: String
    public var from: Int64?
    public var to: Int64?
    public var model: String?

    public init(locationID: Int64, source: String, from: Int64? = nil, to: Int64? = nil, model: String? = nil) {
        self.locationID = locationID
        self.source = source
        self.from = from
        self.to = to
        self.model = model
    }
}
