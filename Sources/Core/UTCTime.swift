// Unix seconds to and from UTC calendar dates and ISO 8601 text, fast enough for exports.

/// Integer conversions between Unix seconds and proleptic Gregorian UTC dates.
///
/// Exports print one timestamp per cell on millions of rows, so this avoids `DateFormatter`,
/// `ISO8601DateFormatter` and `Calendar` (slow, allocating, and time-zone aware when we want none).
public enum UTCTime {
    /// The calendar date of a day counted from 1970-01-01 (day 0).
    ///
    /// Howard Hinnant's `civil_from_days`, exact for every `Int64` Unix time divided by 86 400.
    /// `UTCTime.civil(fromDays: 20_787)` is `(2026, 11, 30)`.
    public static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468  // count from 0000-03-01 so the leap day is the last day of a year
        let era = (z >= 0 ? z : z - 146_096) / 146_097  // floor division by 400 years
        let doe = z - era * 146_097  // day of era, 0...146096
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365  // year of era, 0...399
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)  // day of March-based year, 0...365
        let mp = (5 * doy + 2) / 153  // March = 0 ... February = 11
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// The number of days from 1970-01-01 to a calendar date (negative before it).
    ///
    /// Howard Hinnant's `days_from_civil`; the inverse of ``civil(fromDays:)`` for valid dates.
    public static func days(fromCivil year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// ISO 8601 UTC text for Unix seconds: `UTCTime.format(1_796_040_000)` is `"2026-11-30T12:00:00Z"`.
    ///
    /// Years outside 0...9999 are written with as many digits as they need and a leading `-`
    /// when negative (ISO 8601 expanded years); no weather data gets there.
    public static func format(_ unix: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        writeISO(unix) { bytes.append($0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Emits the ISO 8601 bytes of `unix` one at a time; shared by ``format(_:)`` and `CSVWriter`
    /// so that both print exactly the same text.
    @inline(__always)
    static func writeISO(_ unix: Int64, _ put: (UInt8) -> Void) {
        var days = unix / 86_400
        var seconds = unix % 86_400
        if seconds < 0 {  // Swift's `/` truncates; times before 1970 belong to the previous day
            seconds += 86_400
            days -= 1
        }
        let date = civil(fromDays: days)
        var year = date.year
        if year < 0 {
            put(UInt8(ascii: "-"))
            year = -year
        }
        if year > 9999 {
            writeUnsigned(UInt64(year), put)
        } else {
            put(digit(year / 1000))
            put(digit(year / 100 % 10))
            put(digit(year / 10 % 10))
            put(digit(year % 10))
        }
        let hms = Int(seconds)
        // Spelled out rather than looped over an array literal, which would allocate on every cell.
        put(UInt8(ascii: "-"))
        put(digit(date.month / 10))
        put(digit(date.month % 10))
        put(UInt8(ascii: "-"))
        put(digit(date.day / 10))
        put(digit(date.day % 10))
        put(UInt8(ascii: "T"))
        put(digit(hms / 36_000))
        put(digit(hms / 3600 % 10))
        put(UInt8(ascii: ":"))
        put(digit(hms / 600 % 6))
        put(digit(hms / 60 % 10))
        put(UInt8(ascii: ":"))
        put(digit(hms % 60 / 10))
        put(digit(hms % 10))
        put(UInt8(ascii: "Z"))
    }

    @inline(__always)
    private static func digit(_ value: Int) -> UInt8 { UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value) }
}

/// Writes the decimal digits of `value` (no sign) most significant first, without allocating.
@inline(__always)
func writeUnsigned(_ value: UInt64, _ put: (UInt8) -> Void) {
    // UInt64.max has 20 digits; find the largest power of ten not above the value, then walk down.
    var divisor: UInt64 = 1
    while divisor <= value / 10 { divisor *= 10 }
    var rest = value
    while divisor > 0 {
        put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
        rest %= divisor
        divisor /= 10
    }
}
