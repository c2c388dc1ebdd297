import WxCore

/// Which rows an export reads: one location or all, a half-open time range (runs' `issued_at` for
/// forecasts, `time` for observations), one model or all, one observation source or all.
public struct ExportFilter: Sendable {
    public var locationID: Int64?
    public var from: Int64?
    public var to: Int64?
    public var model: String?
    public var source: String?

    public init(
        locationID: Int64? = nil, from: Int64? = nil, to: Int64? = nil, model: String? = nil, source: String? = nil
    ) {
        self.locationID = locationID
        self.from = from
        self.to = to
        self.model = model
        self.source = source
    }
}
