import FoundationEssentials
import WxCore

/// One station of NOAA's ISD station list (`isd-history.csv`), which names every ISD station with
/// its ICAO code, place and years of data.
public struct CatalogueStation: Sendable, Equatable {
    /// `USAF-WBAN`, the ISD-Lite file id.
    public var id: String
    public var icao: String?
    public var name: String
    public var country: String
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double?
    /// First and last year with data.
    public var firstYear: Int?
    public var lastYear: Int?
}

/// NOAA's `isd-history.csv` read, and searched by distance.
public enum StationCatalogue {
    /// Parses `isd-history.csv` (quoted CSV: USAF, WBAN, STATION NAME, CTRY, STATE, ICAO, LAT, LON,
    /// ELEV(M), BEGIN, END). Stations without coordinates are skipped.
    public static func parse(_ data: Data) throws -> [CatalogueStation] {
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).makeIterator()
        guard let headerLine = lines.next() else { throw StationFormatError("the station list is empty") }
        let header = fields(headerLine).map { $0.uppercased() }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        guard let usaf = column("USAF"), let wban = column("WBAN"), let lat = column("LAT"), let lon = column("LON")
        else {
            throw StationFormatError(
                "the station list is not NOAA's isd-history.csv (its header needs USAF, WBAN, LAT and LON)", line: 1)
        }
        let name = column("STATION NAME")
        let country = column("CTRY")
        let icao = column("ICAO")
        let elevation = column("ELEV(M)")
        let begin = column("BEGIN")
        let end = column("END")
        var out: [CatalogueStation] = []
        while let line = lines.next() {
            let cells = fields(line)
            func cell(_ i: Int?) -> String {
                guard let i, i < cells.count else { return "" }
                return cells[i].trimmed(.whitespaces)
            }
            guard let la = Double(cell(lat)), let lo = Double(cell(lon)), !(la == 0 && lo == 0),
                (-90...90).contains(la), (-180...180).contains(lo)
            else { continue }
            let code = cell(icao)
            out.append(
                CatalogueStation(
                    id: cell(usaf) + "-" + cell(wban), icao: code.isEmpty ? nil : code, name: cell(name),
                    country: cell(country), latitude: la, longitude: lo,
                    elevation: Double(cell(elevation)).flatMap { $0 <= -999 ? nil : $0 },
                    firstYear: Int(cell(begin).prefix(4)), lastYear: Int(cell(end).prefix(4))))
        }
        return out
    }

    /// Stations within `kilometres` of a point, nearest first, with their distance.
    public static func near(
        _ stations: [CatalogueStation], latitude: Double, longitude: Double, within kilometres: Double
    ) -> [(station: CatalogueStation, kilometres: Double)] {
        stations.compactMap { station in
            let d = GridDistance.kilometres(
                latitude: latitude, longitude: longitude, latitude: station.latitude, longitude: station.longitude)
            return d <= kilometres ? (station, d) : nil
        }.sorted { $0.kilometres < $1.kilometres || ($0.kilometres == $1.kilometres && $0.station.id < $1.station.id) }
    }

    /// One station by its ISD id (`USAF-WBAN`) or ICAO code.
    public static func find(_ id: String, in stations: [CatalogueStation]) -> CatalogueStation? {
        let wanted = id.uppercased()
        return stations.first { $0.id == wanted } ?? stations.last { $0.icao?.uppercased() == wanted }
    }

    /// A quoted CSV line's fields (`"a","b, c",d`).
    static func fields(_ line: Substring) -> [String] {
        var out: [String] = []
        var current = ""
        var quoted = false
        var iterator = line.makeIterator()
        while let c = iterator.next() {
            if quoted {
                if c == "\"" { quoted = false } else { current.append(c) }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                out.append(current)
                current = ""
            } else if c != "\r" {
                current.append(c)
            }
        }
        out.append(current)
        return out
    }
}
