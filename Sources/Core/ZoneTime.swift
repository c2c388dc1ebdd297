import FoundationEssentials

/// Wall-clock arithmetic in a location's tz-database zone, for what people type and read (local
/// days, local times). Stored instants never go through it: Open-Meteo's labels carry their own
/// fixed offset. An unknown zone (`auto` before the first fetch) reads as UTC.
public enum ZoneTime {
    /// Seconds east of UTC in `timezone` at `instant`.
    public static func offset(at instant: Int64, timezone: String) -> Int {
        TZDatabase.zone(timezone)?.offset(at: instant) ?? 0
    }

    /// The instant of a wall-clock time (seconds as if UTC) in `timezone`, using the offset in force
    /// then (checked twice, so a time just after a DST change takes the new offset).
    public static func instant(ofWall wall: Int64, timezone: String) -> Int64 {
        let guess = wall - Int64(offset(at: wall, timezone: timezone))
        return wall - Int64(offset(at: guess, timezone: timezone))
    }

    /// The instant of a wall-clock time in `timezone`, or nil when the clocks skip it (the hour a
    /// DST change jumps over), so a caller can say so instead of reading it as the next hour.
    public static func existingInstant(ofWall wall: Int64, timezone: String) -> Int64? {
        let instant = instant(ofWall: wall, timezone: timezone)
        return instant + Int64(offset(at: instant, timezone: timezone)) == wall ? instant : nil
    }

    /// The local date (`YYYY-MM-DD`) of an instant in `timezone`.
    public static func date(of instant: Int64, timezone: String) -> String {
        CivilTime.dateString(unix: instant + Int64(offset(at: instant, timezone: timezone)))
    }

    /// The half-open span of instants of a local date in `timezone` (23 or 25 hours on DST days).
    public static func span(ofDate date: String, timezone: String) -> (start: Int64, end: Int64)? {
        guard let wall = CivilTime.parseLabel(date) else { return nil }
        return (instant(ofWall: wall, timezone: timezone), instant(ofWall: wall + 86400, timezone: timezone))
    }
}

extension ZoneTime {
    /// Longer than any tz-database name (the longest today has 32 characters).
    public static let maxNameLength = 64

    /// Whether `name` is a zone wxdb can adopt from a server or the geocoder: short, made of the
    /// characters tz-database names use, and known to this machine's time zone database.
    public static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maxNameLength,
            name.utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "+")
            })
        else { return false }
        return isKnown(name)
    }

    /// Whether this machine's tz database has a zone of this name.
    public static func isKnown(_ name: String) -> Bool { TZDatabase.zone(name) != nil }
}
