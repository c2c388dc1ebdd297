import WxCore

/// One model run's forecast for one hour.
public struct ForecastValue: Sendable, Equatable {
    public var model: String
    public var issuedAt: Int64
    public var validTime: Int64
    public var value: Double

    /// A value with every field given (engines build these from their rows).
    public init(model: String, issuedAt: Int64, validTime: Int64, value: Double) {
        self.model = model
        self.issuedAt = issuedAt
        self.validTime = validTime
        self.value = value
    }
}
