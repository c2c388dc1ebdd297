import Testing

@testable import WxCore

@Suite("Variables carry how they are scored")
struct VariablesTests {
    @Test(
        "each hourly variable's verification kind, event and observed counterpart",
        arguments: [
            ("temperature_2m", Verification.continuous, false, "temperature_2m"),
            ("precipitation", .continuous, true, "precipitation"),
            ("precipitation_probability", .probability(of: "precipitation"), false, "precipitation"),
            ("wind_direction_10m", .circular, false, "wind_direction_10m"),
            ("weather_code", .categorical, false, "weather_code")
        ])
    func kinds(name: String, verification: Verification, hasEvent: Bool, observed: String) throws {
        let variable = try #require(Variables.hourlyVariable(named: name))
        #expect(variable.verification == verification)
        #expect(variable.hasEvent == hasEvent)
        #expect(variable.observedVariable.name == observed)
    }

    @Test("a probability names a variable wxdb keeps; only quantities are continuous or circular")
    func kindsAreConsistent() {
        for variable in Variables.hourly {
            switch variable.verification {
            case .probability(let other): #expect(Variables.hourlyVariable(named: other) != nil, "\(variable.name)")
            case .categorical: #expect(variable.quantity == .code, "\(variable.name)")
            case .circular: #expect(variable.quantity == .direction, "\(variable.name)")
            case .continuous: #expect(variable.quantity != .code && variable.quantity != .direction, "\(variable.name)")
            }
        }
    }
}
