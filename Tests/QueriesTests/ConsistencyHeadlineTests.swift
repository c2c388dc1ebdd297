import Testing
import WxCore

@testable import WxQueries

@Suite("consistency headline: ties and tiny differences are not a ranking")
struct ConsistencyHeadlineTests {
    private func result(_ means: [(String, Double)]) -> ConsistencyResult {
        ConsistencyResult(
            location: "Here", variable: Variables.hourlyVariable(named: "temperature_2m")!, unit: "°C",
            rows: means.map { ConsistencyRow(model: $0.0, leadFromHours: 24, leadToHours: 120, n: 10, mean: $0.1) })
    }

    @Test(
        "the sentence for each set of means, whatever the order of the rows",
        arguments: [
            ([("icon", 0.5), ("gfs", 0.5)], "gfs and icon flip-flop alike (mean Flip-Flop Index 0.50 °C"),
            ([("icon", 0.54), ("gfs", 0.53)], "gfs and icon flip-flop alike (mean Flip-Flop Index 0.53 to 0.54 °C"),
            (
                [("icon", 1.0), ("gfs", 0.5)],
                "gfs flip-flops least (mean Flip-Flop Index 0.50 °C); icon most (1.00 °C)."
            ),
            (
                [("a", 0.5), ("b", 0.5), ("c", 0.9)],
                "a flip-flops least (mean Flip-Flop Index 0.50 °C); c most (0.90 °C)."
            ),
            ([("a", 0.5), ("b", 0.51), ("c", 0.505)], "all 3 models (a, c, b) flip-flop alike")
        ])
    func headline(means: [(String, Double)], expected: String) {
        for order in [means, means.reversed()] {
            let text = result(order).headline
            #expect(text.hasPrefix(expected), "\(text)")
            // One model is never both the steadiest and the least steady.
            if let least = text.split(separator: " ").first, text.contains(" least ") {
                #expect(!text.contains("; \(least) most"), "\(text)")
            }
        }
    }
}
