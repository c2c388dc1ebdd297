import Foundation

/// The official stations' archives, served offline: IEM's `asos.py`, NCEI's ISD-Lite station-years
/// and the ISD station list. The values are made up but deterministic (a daily cycle), so tests and
/// the demo can compute what must be stored.
public enum StationArchives {
    /// An answer: status, content type, body.
    public struct Answer {
        public var status: Int
        public var contentType: String
        public var body: Data
    }

    /// The stations the replay archive knows (real ids and places, synthetic data).
    public static let stations:
        [(
            usaf: String, wban: String, name: String, ctry: String, icao: String,
            lat: Double, lon: Double, elevation: Double, begin: String, end: String
        )] = [
            ("101470", "99999", "HAMBURG-FUHLSBUTTEL", "GM", "EDDH", 53.633, 9.983, 16, "19310101", "20251130"),
            ("101450", "99999", "HAMBURG-FINKENWERDER", "GM", "EDHI", 53.535, 9.835, 7, "19730101", "20251130"),
            ("101560", "99999", "LUBECK BLANKENSEE", "GM", "EDHL", 53.803, 10.700, 16, "19730101", "20251130"),
            ("103840", "99999", "BERLIN-TEMPELHOF", "GM", "EDDI", 52.468, 13.404, 49, "19380101", "20081030"),
            ("103850", "99999", "BERLIN BRANDENBURG", "GM", "EDDB", 52.367, 13.517, 48, "19730101", "20251130"),
            ("109610", "99999", "ZUGSPITZE", "GM", "", 47.421, 10.985, 2964, "19360101", "20251130"),
            (
                "725460", "14933", "DES MOINES INTERNATIONAL AIRPORT", "US", "KDSM", 41.534, -93.653, 291.7, "19730101",
                "20251130"
            )
        ]

    /// The answer for `path`, or nil when it is not a station-archive path.
    public static func answer(path: String, query: (String) -> String?) -> Answer? {
        if path.hasSuffix("/isd-history.csv") { return catalogue() }
        if path.hasSuffix("/asos.py") { return asos(query) }
        let parts = path.split(separator: "/")
        if let i = parts.firstIndex(of: "isd-lite"), parts.count == i + 3, let year = Int(parts[i + 1]),
            parts[i + 2].hasSuffix("-\(year).gz")
        {
            let id = parts[i + 2].dropLast("-\(year).gz".count)
            return isdLite(String(id), year: year)
        }
        return nil
    }

    static func catalogue() -> Answer {
        var text =
            "\"USAF\",\"WBAN\",\"STATION NAME\",\"CTRY\",\"STATE\",\"ICAO\",\"LAT\",\"LON\",\"ELEV(M)\",\"BEGIN\",\"END\"\n"
        for s in stations {
            let fields = [
                s.usaf, s.wban, s.name, s.ctry, "", s.icao, sign(s.lat), sign(s.lon), sign(s.elevation), s.begin, s.end
            ]
            text += fields.map { "\"\($0)\"" }.joined(separator: ",") + "\n"
        }
        return Answer(status: 200, contentType: "text/csv", body: Data(text.utf8))
    }

    static func sign(_ v: Double) -> String { (v >= 0 ? "+" : "") + String(format: "%.3f", v) }

    /// The synthetic weather of hour `t` (UTC seconds): temperature in tenths of °C, wind speed in
    /// tenths of m/s, direction, precipitation in tenths of mm.
    public static func weather(_ t: Int64) -> (temperature: Int, dewPoint: Int, speed: Int, direction: Int, rain: Int) {
        let h = Int((t / 3600) % 24)
        let day = Int(t / 86400)
        let temperature =
            50 + [0, -5, -10, -15, -20, -20, -15, -5, 5, 20, 35, 50, 60, 65, 70, 65, 55, 45, 35, 25, 20, 15, 10, 5][h]
            + (day % 7) * 3
        return (
            temperature, temperature - 30, h % 6 == 0 ? 0 : 20 + 5 * (h % 5), h % 6 == 0 ? 0 : (h * 15) % 360 + 10,
            h % 8 == 3 ? 12 : 0
        )
    }

    /// `asos.py`: routine reports at :50 for `station` from year1/month1/day1 up to (not including)
    /// year2/month2/day2, in the units and columns it is asked for (tmpc or tmpf, sknt, p01m or p01i).
    static func asos(_ q: (String) -> String?) -> Answer {
        func bad(_ text: String) -> Answer { Answer(status: 400, contentType: "text/plain", body: Data(text.utf8)) }
        guard let station = q("station"), let start = date(q, "1"), let end = date(q, "2") else {
            return bad("station, year1, month1, day1, year2, month2 and day2 are required")
        }
        guard let known = stations.first(where: { $0.icao == station || $0.icao == "K" + station }) else {
            return Answer(status: 200, contentType: "text/csv", body: Data("station,valid\n".utf8))
        }
        let data = (q("data") ?? "all").split(separator: ",").map(String.init)
        let metric = data.contains("tmpc")
        let latlon = q("latlon") == "yes"
        var header = ["station", "valid"]
        if latlon { header += ["lon", "lat"] }
        if q("elev") == "yes" { header.append("elevation") }
        header +=
            metric ? ["tmpc", "dwpc", "drct", "sknt", "p01m", "mslp"] : ["tmpf", "dwpf", "drct", "sknt", "p01i", "mslp"]
        var text = header.joined(separator: ",") + "\n"
        var t = start
        while t < end {
            let report = t + 3600 - 600
            let w = weather(t + 3600)
            let c = Double(w.temperature) / 10
            let d = Double(w.dewPoint) / 10
            let knots = Double(w.speed) / 10 * 3.6 / 1.852
            var cells = [station, iso(report)]
            if latlon { cells += [String(known.lon), String(known.lat)] }
            if q("elev") == "yes" { cells.append(String(known.elevation)) }
            if metric {
                cells += [String(format: "%.1f", c), String(format: "%.1f", d)]
            } else {
                cells += [String(format: "%.2f", c * 9 / 5 + 32), String(format: "%.2f", d * 9 / 5 + 32)]
            }
            cells += [String(w.direction), String(format: "%.2f", knots)]
            cells.append(
                metric ? String(format: "%.1f", Double(w.rain) / 10) : String(format: "%.2f", Double(w.rain) / 254))
            cells.append("1013.2")
            text += cells.joined(separator: ",") + "\n"
            t += 3600
        }
        return Answer(status: 200, contentType: "text/plain; charset=utf-8", body: Data(text.utf8))
    }

    static func date(_ q: (String) -> String?, _ n: String) -> Int64? {
        guard let y = q("year" + n).flatMap(Int.init), let m = q("month" + n).flatMap(Int.init),
            let d = q("day" + n).flatMap(Int.init), (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        return days(y, m, d) * 86400
    }

    static func days(_ y: Int, _ m: Int, _ d: Int) -> Int64 {
        let y2 = m <= 2 ? y - 1 : y
        let era = (y2 >= 0 ? y2 : y2 - 399) / 400
        let yoe = y2 - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Int64(era * 146097 + doe - 719468)
    }

    static func iso(_ t: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(t))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!)
    }

    /// One ISD-Lite station-year, gzip-compressed, every hour present.
    static func isdLite(_ id: String, year: Int) -> Answer {
        guard stations.contains(where: { "\($0.usaf)-\($0.wban)" == id }) else {
            return Answer(status: 404, contentType: "text/html", body: Data("<h1>Not Found</h1>".utf8))
        }
        var text = ""
        var t = days(year, 1, 1) * 86400
        let end = days(year + 1, 1, 1) * 86400
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        while t < end {
            let c = calendar.dateComponents([.month, .day, .hour], from: Date(timeIntervalSince1970: TimeInterval(t)))
            let w = weather(t)
            let fields = [w.temperature, w.dewPoint, 10132, w.direction, w.speed, 4, w.rain, -9999]
            text +=
                String(format: "%04d %02d %02d %02d", year, c.month!, c.day!, c.hour!)
                + fields.map { String(format: " %5d", $0) }.joined() + "\n"
            t += 3600
        }
        return Answer(status: 200, contentType: "application/octet-stream", body: gzipStored(Data(text.utf8)))
    }

    /// gzip with stored (uncompressed) deflate blocks: valid for any reader, no zlib needed here.
    static func gzipStored(_ data: Data) -> Data {
        var out = Data([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])
        let bytes = [UInt8](data)
        var offset = 0
        repeat {
            let n = min(65535, bytes.count - offset)
            let final: UInt8 = offset + n == bytes.count ? 1 : 0
            out.append(final)
            out.append(contentsOf: [UInt8(n & 0xff), UInt8(n >> 8), UInt8(~n & 0xff), UInt8((~n >> 8) & 0xff)])
            out.append(contentsOf: bytes[offset..<offset + n])
            offset += n
        } while offset < bytes.count
        let crc = crc32(bytes)
        for value in [crc, UInt32(truncatingIfNeeded: bytes.count)] {
            out.append(contentsOf: [
                UInt8(value & 0xff), UInt8((value >> 8) & 0xff), UInt8((value >> 16) & 0xff), UInt8(value >> 24)
            ])
        }
        return out
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            table[i] = c
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes { crc = table[Int((crc ^ UInt32(b)) & 0xff)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
