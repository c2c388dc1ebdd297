// The system's tz database read directly (RFC 8536 TZif files under $TZDIR or /usr/share/zoneinfo),
// so time zones need neither Foundation's TimeZone nor ICU's data behind it. Only what wxdb asks
// of a zone is kept: the UTC offset in force at an instant.
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One zone's offsets: the transitions of its TZif file, then its POSIX TZ rule for later instants.
public struct TZifZone: Sendable, Equatable {
    /// Instants (Unix seconds) at which the offset changes, ascending.
    public let transitions: [Int64]
    /// The offset (seconds east of UTC) from each transition on.
    public let offsets: [Int]
    /// The offset before the first transition.
    public let initialOffset: Int
    /// The rule for instants after the last transition (the file's footer), when it has one.
    public let rule: PosixTZ?

    /// Seconds east of UTC at `instant`.
    public func offset(at instant: Int64) -> Int {
        guard let first = transitions.first, instant >= first else { return initialOffset }
        if instant >= transitions[transitions.count - 1], let rule { return rule.offset(at: instant) }
        // The last transition at or before `instant`.
        var low = 0
        var high = transitions.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if transitions[mid] <= instant { low = mid } else { high = mid - 1 }
        }
        return offsets[low]
    }

    /// Reads a TZif file (version 1 to 4); nil when it is not one.
    public init?(tzif bytes: [UInt8]) {
        var reader = TZifReader(bytes: bytes)
        guard let head = reader.header(), let v1 = reader.block(head, wide: false) else { return nil }
        if head.version >= 2 {
            // Version 2 and later repeat the data with 64-bit times, then the footer rule.
            guard let head2 = reader.header(), let v2 = reader.block(head2, wide: true) else { return nil }
            let footer = reader.footer()
            self.init(block: v2, rule: footer.flatMap { $0.isEmpty ? nil : PosixTZ($0) })
        } else {
            self.init(block: v1, rule: nil)
        }
    }

    private init(block: TZifReader.Block, rule: PosixTZ?) {
        transitions = block.times
        offsets = block.typeIndexes.map { block.types[Int($0)].offset }
        // RFC 8536 §3.2: local time before the first transition is that of the first type (type 0).
        initialOffset = block.types.first?.offset ?? 0
        self.rule = rule
    }
}

/// A POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3` (the footer of a TZif file).
public struct PosixTZ: Sendable, Equatable {
    /// Seconds east of UTC in standard time.
    public let standardOffset: Int
    /// Seconds east of UTC in daylight time, when the zone has it.
    public let daylightOffset: Int?
    /// When daylight time starts and ends each year, in local (wall) time of the time before it.
    public let start: Rule?
    public let end: Rule?

    /// A day of the year and a time of that day.
    public struct Rule: Sendable, Equatable {
        public enum Day: Sendable, Equatable {
            /// `Jn`: day 1...365, February 29 never counted.
            case julian(Int)
            /// `n`: day 0...365, February 29 counted in leap years.
            case zeroBased(Int)
            /// `Mm.w.d`: day `d` (0 = Sunday) of week `w` (5 = the last) of month `m`.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
        }
        public let day: Day
        /// Seconds after local midnight (may be negative or past 24 h, RFC 8536 §3.3.1).
        public let time: Int
    }

    /// Parses `text`; nil when it is not a POSIX TZ string wxdb can read.
    public init?(_ text: String) {
        var scan = Scanner(Array(text.utf8))
        guard scan.name(), let std = scan.offset() else { return nil }
        standardOffset = -std  // POSIX offsets are west of UTC
        if scan.atEnd {
            daylightOffset = nil
            start = nil
            end = nil
            return
        }
        guard scan.name() else { return nil }
        if scan.peek != UInt8(ascii: ","), !scan.atEnd {
            guard let dst = scan.offset() else { return nil }
            daylightOffset = -dst
        } else {
            daylightOffset = standardOffset + 3600
        }
        // Without rules POSIX leaves the dates to the implementation; tzcode uses M3.2.0,M11.1.0.
        guard scan.take(UInt8(ascii: ",")) else {
            guard scan.atEnd else { return nil }
            start = Rule(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200)
            end = Rule(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)
            return
        }
        guard let s = scan.rule(), scan.take(UInt8(ascii: ",")), let e = scan.rule(), scan.atEnd else { return nil }
        start = s
        end = e
    }

    /// Seconds east of UTC at `instant`.
    public func offset(at instant: Int64) -> Int {
        guard let daylightOffset, let start, let end else { return standardOffset }
        let year = UTCTime.civil(fromDays: Self.floorDiv(instant + Int64(standardOffset), 86400)).year
        // Check the year around the instant's: a rule's instant can fall in the neighbouring year in UTC.
        var inDaylight = false
        var latest = Int64.min
        for y in [year - 1, year, year + 1] {
            let on = Self.instant(of: start, year: y, wallOffset: standardOffset)
            let off = Self.instant(of: end, year: y, wallOffset: daylightOffset)
            // On a tie (daylight time all year: `0/0,J365/25`) the start wins.
            for (at, daylight) in [(on, true), (off, false)]
            where at <= instant && (at > latest || (at == latest && daylight)) {
                latest = at
                inDaylight = daylight
            }
        }
        return inDaylight ? daylightOffset : standardOffset
    }

    /// The UTC instant of `rule` in `year`, its time read in a wall clock `wallOffset` east of UTC.
    static func instant(of rule: Rule, year: Int, wallOffset: Int) -> Int64 {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let jan1 = UTCTime.days(fromCivil: year, month: 1, day: 1)
        let day: Int64
        switch rule.day {
        case .julian(let n): day = jan1 + Int64(n - 1) + (leap && n >= 60 ? 1 : 0)
        case .zeroBased(let n): day = jan1 + Int64(n)
        case .monthWeekDay(let month, let week, let weekday):
            let first = UTCTime.days(fromCivil: year, month: month, day: 1)
            // 1970-01-01 was a Thursday (4).
            let firstWeekday = Int(((first % 7) + 11) % 7)
            var d = first + Int64((weekday - firstWeekday + 7) % 7) + Int64(7 * (week - 1))
            let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            while d >= first + Int64(monthDays) { d -= 7 }
            day = d
        }
        return day * 86400 + Int64(rule.time) - Int64(wallOffset)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// A cursor over the TZ string's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var at = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var atEnd: Bool { at >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[at] }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            at += 1
            return true
        }

        /// A zone abbreviation: three or more letters, or `<…>` quoted (`<+0330>`).
        mutating func name() -> Bool {
            if take(UInt8(ascii: "<")) {
                while let b = peek, b != UInt8(ascii: ">") { at += 1 }
                return take(UInt8(ascii: ">"))
            }
            let from = at
            while let b = peek, (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) { at += 1 }
            return at - from >= 3
        }

        mutating func number() -> Int? {
            let from = at
            var value = 0
            while let b = peek, (0x30...0x39).contains(b), at - from < 6 {
                value = value * 10 + Int(b - 0x30)
                at += 1
            }
            return at > from ? value : nil
        }

        /// `[+-]hh[:mm[:ss]]` in seconds (hours up to 167 for rule times, RFC 8536 §3.3.1).
        mutating func offset() -> Int? {
            var sign = 1
            if take(UInt8(ascii: "-")) { sign = -1 } else { _ = take(UInt8(ascii: "+")) }
            guard let hours = number(), hours <= 167 else { return nil }
            var seconds = hours * 3600
            if take(UInt8(ascii: ":")) {
                guard let minutes = number(), minutes < 60 else { return nil }
                seconds += minutes * 60
                if take(UInt8(ascii: ":")) {
                    guard let s = number(), s < 60 else { return nil }
                    seconds += s
                }
            }
            return sign * seconds
        }

        /// `Jn`, `n` or `Mm.w.d`, then an optional `/time` (02:00 when absent).
        mutating func rule() -> Rule? {
            let day: Rule.Day
            if take(UInt8(ascii: "J")) {
                guard let n = number(), (1...365).contains(n) else { return nil }
                day = .julian(n)
            } else if take(UInt8(ascii: "M")) {
                guard let m = number(), (1...12).contains(m), take(UInt8(ascii: ".")), let w = number(),
                    (1...5).contains(w),
                    take(UInt8(ascii: ".")), let d = number(), (0...6).contains(d)
                else { return nil }
                day = .monthWeekDay(month: m, week: w, weekday: d)
            } else {
                guard let n = number(), (0...365).contains(n) else { return nil }
                day = .zeroBased(n)
            }
            var time = 7200
            if take(UInt8(ascii: "/")) {
                guard let t = offset() else { return nil }
                time = t
            }
            return Rule(day: day, time: time)
        }
    }
}

/// The fields of a TZif file wxdb uses, read with bounds checks (a damaged file reads as none).
private struct TZifReader {
    struct Header {
        var version: Int
        var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int
    }

    struct Block {
        var times: [Int64]
        var typeIndexes: [UInt8]
        var types: [(offset: Int, isDST: Bool)]
    }

    let bytes: [UInt8]
    var at = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func u32() -> UInt32? {
        guard at + 4 <= bytes.count else { return nil }
        defer { at += 4 }
        return bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func i64() -> Int64? {
        guard at + 8 <= bytes.count else { return nil }
        defer { at += 8 }
        return Int64(bitPattern: bytes[at..<at + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    mutating func header() -> Header? {
        guard at + 44 <= bytes.count, bytes[at..<at + 4].elementsEqual("TZif".utf8) else { return nil }
        let v = bytes[at + 4]
        let version = v == 0 ? 1 : Int(v) - 0x30
        guard (1...9).contains(version) else { return nil }
        at += 20
        var counts: [Int] = []
        for _ in 0..<6 {
            guard let c = u32(), c < 1 << 20 else { return nil }
            counts.append(Int(c))
        }
        return Header(
            version: version, isutcnt: counts[0], isstdcnt: counts[1], leapcnt: counts[2], timecnt: counts[3],
            typecnt: counts[4], charcnt: counts[5])
    }

    mutating func block(_ h: Header, wide: Bool) -> Block? {
        let timeSize = wide ? 8 : 4
        let size =
            h.timecnt * timeSize + h.timecnt + h.typecnt * 6 + h.charcnt + h.leapcnt * (timeSize + 4) + h.isstdcnt
            + h.isutcnt
        guard h.typecnt > 0, at + size <= bytes.count else { return nil }
        var times: [Int64] = []
        times.reserveCapacity(h.timecnt)
        for _ in 0..<h.timecnt {
            if wide {
                times.append(i64()!)
            } else {
                times.append(Int64(Int32(bitPattern: u32()!)))
            }
        }
        let indexes = Array(bytes[at..<at + h.timecnt])
        at += h.timecnt
        guard indexes.allSatisfy({ Int($0) < h.typecnt }) else { return nil }
        var types: [(offset: Int, isDST: Bool)] = []
        for _ in 0..<h.typecnt {
            let offset = Int(Int32(bitPattern: u32()!))
            types.append((offset, bytes[at] != 0))
            at += 2  // isdst, abbreviation index
        }
        at += h.charcnt + h.leapcnt * (timeSize + 4) + h.isstdcnt + h.isutcnt
        return Block(times: times, typeIndexes: indexes, types: types)
    }

    /// The text between the newlines after the version 2 data.
    mutating func footer() -> String? {
        guard at < bytes.count, bytes[at] == 0x0A, let end = bytes[(at + 1)...].firstIndex(of: 0x0A) else { return nil }
        return String(decoding: bytes[(at + 1)..<end], as: UTF8.self)
    }
}

/// The zones of this machine's tz database, each read once.
public enum TZDatabase {
    private static let cache = Mutex<[String: TZifZone?]>([:])

    /// Where the tz database is: `$TZDIR`, else /usr/share/zoneinfo.
    public static var directory: String {
        if let dir = getenv("TZDIR").map({ String(cString: $0) }), !dir.isEmpty { return dir }
        return "/usr/share/zoneinfo"
    }

    /// The zone named `identifier` (`Europe/Berlin`, `UTC`), or nil when this machine has none of that name.
    public static func zone(_ identifier: String) -> TZifZone? {
        if let known = cache.withLock({ $0[identifier] }) { return known }
        let zone = load(identifier)
        cache.withLock { $0[identifier] = zone }
        return zone
    }

    private static func load(_ identifier: String) -> TZifZone? {
        // A name, not a path: no empty, `.` or `..` parts, nothing absolute.
        let parts = identifier.split(separator: "/", omittingEmptySubsequences: false)
        guard !identifier.isEmpty, identifier.utf8.count <= 255,
            parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }), !identifier.utf8.contains(0)
        else { return nil }
        let path = directory + "/" + identifier
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        // Regular files only, and no bigger than any real zone file (the largest is under 4 kB).
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 1 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, $0.count - got) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            got += n
        }
        return TZifZone(tzif: bytes)
    }
}
