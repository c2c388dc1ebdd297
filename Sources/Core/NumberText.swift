import FoundationEssentials

/// The one rule for numbers wxdb computes before it prints them (converted units, scores, means).
public enum NumberText {
    /// `value` at 15 significant digits: the double nearest to its 15-digit decimal. Arithmetic
    /// (unit conversion, sums, means) leaves noise in the 16th and 17th digits, so `-29.9 °C` in °F
    /// is -21.819999999999993 and 0.1 + 0.2 is 0.30000000000000004; no value wxdb keeps or computes
    /// carries real information there. The writers print every double's shortest round-trip text,
    /// so the tidy value prints `-21.82` and `0.3` and reads back to exactly that double.
    public static func tidy(_ value: Double) -> Double {
        guard value.isFinite, significantDigits(value.description) > 15 else { return value }
        return slowTidy(value)
    }

    /// `tidy` of an optional.
    public static func tidy(_ value: Double?) -> Double? { value.map { tidy($0) } }

    static func slowTidy(_ value: Double) -> Double {
        Double(String(printf: "%.15g", value)) ?? value
    }

    /// Significant digits of a Swift shortest-form number text (`-0.0012`, `1.5e-07`, `39.02`).
    public static func significantDigits(_ text: String) -> Int {
        var digits = 0
        var pendingZeros = 0
        var started = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { continue }
            if byte == UInt8(ascii: "0") {
                if started { pendingZeros += 1 }
            } else {
                started = true
                digits += pendingZeros + 1
                pendingZeros = 0
            }
        }
        return digits
    }
}
