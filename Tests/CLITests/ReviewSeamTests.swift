import Testing
import WxCore

@testable import WxCLI
@testable import WxQueries

@Suite("Seams between merged branches, found in review")
struct ReviewSeamTests {
    @Test(
        "a verify interval has the column's fixed decimals and puts 'to' between its bounds when a printed bound carries a sign",
        arguments: [
            (0.04, -0.001, 0.08, true, "+0.04 (0.00 to +0.08)"),
            (0.1, 0.03, 0.17, true, "+0.10 (+0.03 to +0.17)"),
            (-0.06, -0.12, 0.001, true, "-0.06 (-0.12 to 0.00)"),
            (1.31, 1.18, 1.45, false, "1.31 (1.18–1.45)"),
            (0, 0, 0, true, "0.00 (0.00–0.00)")
        ])
    func intervalDash(value: Double, low: Double, high: Double, signed: Bool, expected: String) {
        let text = Query.Verify.intervalText(
            .number(value), ScoreInterval(low: low, high: high), kind: signed ? .signed(places: 2) : .number(places: 2))
        #expect(text == expected)
    }

    @Test("a verify score without an interval keeps the column's fixed decimals (0.30, not 0.3)")
    func noIntervalFixed() {
        #expect(Query.Verify.intervalText(.number(0.3), nil, kind: .number(places: 2)) == "0.30")
        #expect(Query.Verify.intervalText(.number(2), nil, kind: .signed(places: 2)) == "+2.00")
    }
}

@Suite("Verify intervals stay inside what a score can be")
struct IntervalLimitTests {
    @Test("a small MAE from a few bad days gets an interval that ends at 0, not below, after the t/z widening")
    func maeNeverNegative() throws {
        // Nine perfect days and one day 1° off: the percentile interval's low end is 0 and widening
        // by t(2)/z would take it to about -0.12.
        let days: [(start: Int64, sums: SummarySums)] = (0..<10).map { day in
            var sums = SummarySums()
            for _ in 0..<24 { sums.continuous.add(forecast: day == 3 ? 11 : 10, observed: 10) }
            return (start: Int64(day) * 86_400, sums: sums)
        }
        let intervals = try #require(DayBootstrap.intervals(days: days, confidence: 0.95, seed: 7))
        for score in [IntervalScore.mae, .rmse] {
            let interval = try #require(intervals.scores[score])
            #expect(interval.low >= 0, "\(score) interval starts at \(interval.low)")
            #expect(interval.high > interval.low)
        }
        let plain = try #require(
            DayBootstrap.intervals(days: days, confidence: 0.95, widened: false, seed: 7))
        #expect(plain.scores[.mae]!.low == 0)
    }
}
