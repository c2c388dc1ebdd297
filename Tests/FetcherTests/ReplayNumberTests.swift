// The replay server writes its numbers by hand (Foundation's formatter was most of the time of a
// batch answer); they must read exactly as "%.Nf" wrote them, so recorded expectations still hold.
import Foundation
import Testing

@testable import WxReplay

@Suite("Replay server number text")
struct ReplayNumberTests {
    static let values: [Double] = [
        0, -0.0, 0.04, -0.04, -0.05, 0.05, 0.5, -0.5, 1, -1, 9.95, 9.949_999, 12.345, -12.345, 1013.25, 99.999,
        1e-9, -1e-9, 123_456_789.123, 5e14, -5e14, 1e20, -273.15, 2.675, 1.005
    ]

    @Test("fixed decimals read as \"%.Nf\" of the rounded value", arguments: 0...4)
    func matchesFormat(_ decimals: Int) {
        var random = SystemRandomNumberGenerator()
        let samples = Self.values + (0..<2_000).map { _ in Double.random(in: -2_000...2_000, using: &random) }
        // (Whole numbers go through Int, as before: no value the server makes comes near its range.)
        for v in samples where decimals > 0 || abs(v) < 1e18 {
            let scale = pow(10, Double(decimals))
            var r = (v * scale).rounded() / scale
            if r == 0 { r = 0 }
            let expected = decimals == 0 ? String(Int(v.rounded())) : String(format: "%.\(decimals)f", r)
            #expect(JSONText.number(v, decimals: decimals) == expected, "\(v)")
        }
    }
}
