/// Metric (as stored) or imperial (°F, mph, inch), applied when results are made.
public enum UnitSystem: String, Sendable, CaseIterable {
    case metric, imperial

    /// A stored metric value in this system.
    public func convert(_ value: Double, _ quantity: Quantity) -> Double {
        self == .imperial ? NumberText.tidy(Variables.toImperial(value, quantity: quantity)) : value
    }

    /// A difference of two values (an error, a bias, a change) in this system: scaled, never offset.
    public func convertDifference(_ value: Double, _ quantity: Quantity) -> Double {
        guard self == .imperial else { return value }
        return NumberText.tidy(
            Variables.toImperial(value, quantity: quantity) - Variables.toImperial(0, quantity: quantity))
    }

    /// The unit label for `quantity`.
    public func unit(_ quantity: Quantity) -> String {
        Variables.displayUnit(quantity, imperial: self == .imperial)
    }
}
