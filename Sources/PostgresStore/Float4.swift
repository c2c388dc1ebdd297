// Which runs' values go into PostgreSQL's 4-byte `real` columns (migration 0006): only a run whose
// every value reads back from float4 as the same double, bit for bit, so storing it so changes no
// value a user sees. The read side is the views of 0006: `col::text::float8`, the double nearest to
// float4's shortest text (float4out at extra_float_digits >= 1; PostgresEngine sets it).
import WxCore

enum Float4 {
    /// Whether `value` survives float4: the double parsed from the shortest text of `Float(value)`
    /// is `value` itself. ±0 keep their sign; magnitudes outside [1e-30, 1e30] (and NaN, ±inf)
    /// never go, as migration 0006's SQL decides for older rows.
    static func keeps(_ value: Double) -> Bool {
        if value == 0 { return true }
        let magnitude = value.magnitude
        guard magnitude >= 1e-30, magnitude <= 1e30 else { return false }
        // Whole numbers below 2^24 are exact in float4 and print as themselves: most codes,
        // percentages, directions and pressures need no text.
        if magnitude < 16_777_216, value.rounded(.towardZero) == value { return true }
        // A decimal of at most 6 significant digits and 3 places (21.3, 1013.25) that `value` is the
        // nearest double to (the division is correctly rounded): float4 holds it and prints exactly
        // it (float4 keeps 6 digits; no decimal that short sits near a float4 rounding midpoint), so
        // it reads back as `value`. Most forecast values end here, without text.
        for scale in [10.0, 100.0, 1000.0] {
            let digits = (value * scale).rounded()
            if digits.magnitude < 1_000_000, digits / scale == value { return true }
        }
        return Double(Float(value).description) == value
    }

    /// Whether every value of the run's hourly and daily columns survives float4 (the daily
    /// instants, sunrise and sunset, are bigint columns and do not count).
    static func keeps(_ forecast: ModelForecast) -> Bool {
        for column in forecast.hourly {
            guard let column else { continue }
            for value in column { if let value, !keeps(value) { return false } }
        }
        for (index, column) in forecast.daily.enumerated() where Variables.daily[index].quantity != .instant {
            guard let column else { continue }
            for value in column { if let value, !keeps(value) { return false } }
        }
        return true
    }
}
