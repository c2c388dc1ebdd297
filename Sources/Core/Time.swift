/// Calendar arithmetic on the proleptic Gregorian calendar, without time-zone databases:
/// Open-Meteo applies one fixed UTC offset per response, so that is all wxdb needs to turn its
/// labels into instants.
public enum CivilTime {
    /// Days since 1970-01-01 of a civil date.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        Int(UTCTime.days(fromCivil: year, month: month, day: day))
    }

    /// The civil date of a day count since 1970-01-01.
    public static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        UTCTime.civil(fromDays: Int64(days))
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `YYYY-MM-DD` of the day containing `seconds` after the epoch (shifted by an offset by the caller).
    public static func dateString(unix seconds: Int64) -> String {
        let (y, m, d) = date(days: Int(floorDiv(seconds, 86400)))
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
    }

    /// ISO 8601 UTC with `Z`: `2026-11-30T12:00:00Z`.
    public static func isoUTC(_ seconds: Int64) -> String { UTCTime.format(seconds) }

    /// Local wall time `YYYY-MM-DD HH:MM` for an instant under a fixed offset.
    public static func localString(_ seconds: Int64, offset: Int) -> String {
        let local = seconds + Int64(offset)
        let rest = Int(local - floorDiv(local, 86400) * 86400)
        return dateString(unix: local) + " " + pad(rest / 3600, 2) + ":" + pad(rest % 3600 / 60, 2)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// A parsed ISO 8601 date-time: local fields and, when the text had one, its UTC offset.
    public struct Parsed: Equatable, Sendable {
        public var year: Int, month: Int, day: Int
        public var hour: Int, minute: Int, second: Int
        /// Seconds east of UTC, or nil when the text had no `Z` or offset.
        public var offset: Int?
        public var hasTime: Bool

        /// Seconds since the epoch of the local fields read as if they were UTC.
        public var wallSeconds: Int64 {
            Int64(CivilTime.days(year: year, month: month, day: day)) * 86400
                + Int64(hour * 3600 + minute * 60 + second)
        }
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` and those followed by `Z` or `±HH:MM`
    /// (also `±HHMM`, `±HH`, and a space instead of `T`). Returns nil for anything else,
    /// including impossible dates like February 30.
    public static func parse(_ text: String) -> Parsed? {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            i += count
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2) else {
            return nil
        }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        var result = Parsed(
            year: year, month: month, day: day, hour: 0, minute: 0, second: 0, offset: nil, hasTime: false)
        if i == b.count { return result }
        guard b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " ") || b[i] == UInt8(ascii: "t") else { return nil }
        i += 1
        guard let hour = digits(2), expect(58), let minute = digits(2) else { return nil }
        var second = 0
        if i < b.count, b[i] == 58 {
            i += 1
            guard let s = digits(2) else { return nil }
            second = s
            if i < b.count, b[i] == UInt8(ascii: ".") {
                i += 1
                let start = i
                while i < b.count, b[i] >= 48 && b[i] <= 57 { i += 1 }
                if i == start { return nil }
            }
        }
        guard hour <= 23 || (hour == 24 && minute == 0 && second == 0), minute <= 59, second <= 59 else { return nil }
        result.hour = hour
        result.minute = minute
        result.second = second
        result.hasTime = true
        if i == b.count { return result }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
            result.offset = 0
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let oh = digits(2) else { return nil }
            var om = 0
            if i < b.count {
                _ = expect(58)
                guard let m = digits(2) else { return nil }
                om = m
            }
            guard oh <= 18, om <= 59 else { return nil }
            result.offset = sign * (oh * 3600 + om * 60)
        }
        return i == b.count ? result : nil
    }

    /// Parses an Open-Meteo local label (`2026-03-08T02:00`, no offset) to its wall-clock seconds.
    /// Hot path for ingest: avoids building a `Parsed` through `parse`.
    public static func parseLabel(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { b -> Int64? in
            guard b.count == 16 || b.count == 10 else { return nil }
            @inline(__always) func d(_ k: Int) -> Int? {
                let c = b[k]
                return c >= 48 && c <= 57 ? Int(c - 48) : nil
            }
            guard let y0 = d(0), let y1 = d(1), let y2 = d(2), let y3 = d(3), b[4] == 45,
                let m0 = d(5), let m1 = d(6), b[7] == 45, let d0 = d(8), let d1 = d(9)
            else { return nil }
            let year = y0 * 1000 + y1 * 100 + y2 * 10 + y3, month = m0 * 10 + m1, day = d0 * 10 + d1
            guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
            var seconds = Int64(days(year: year, month: month, day: day)) * 86400
            if b.count == 16 {
                guard b[10] == UInt8(ascii: "T"), let h0 = d(11), let h1 = d(12), b[13] == 58,
                    let n0 = d(14), let n1 = d(15)
                else { return nil }
                let hour = h0 * 10 + h1, minute = n0 * 10 + n1
                guard hour <= 23, minute <= 59 else { return nil }
                seconds += Int64(hour * 3600 + minute * 60)
            }
            return seconds
        }
    }
}
