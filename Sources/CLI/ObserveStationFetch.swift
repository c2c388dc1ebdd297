import FoundationEssentials
import WxCore
import WxFetcher
import WxStations
import WxStore

/// `wxdb observe stations --near` and `observe fetch --station`: official stations found in NOAA's
/// station list and their archives downloaded (IEM's METAR archive, NCEI's ISD-Lite years).
extension ObserveCommand.StationFetch {
    /// Where the station archives are; each can be pointed elsewhere (the replay server) by the
    /// environment, like the Open-Meteo endpoints.
    struct Archives {
        var catalogue: String
        var asos: String
        var isdLite: String

        init(_ environment: [String: String]) {
            func value(_ name: String, _ fallback: String) -> String {
                guard let v = environment[name], !v.isEmpty else { return fallback }
                return v
            }
            catalogue = value("WXDB_ISD_HISTORY_URL", "https://www.ncei.noaa.gov/pub/data/noaa/isd-history.csv")
            asos = value("WXDB_IEM_ASOS_URL", "https://mesonet.agron.iastate.edu/cgi-bin/request/asos.py")
            isdLite = value("WXDB_ISD_LITE_URL", "https://www.ncei.noaa.gov/pub/data/noaa/isd-lite")
        }
    }

    /// The folder downloads are kept in (`$XDG_CACHE_HOME/wxdb`, else `~/.cache/wxdb`).
    static func cacheFolder(_ context: Context) -> URL {
        let base =
            context.environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: context.environment["HOME"] ?? FileManager.default.temporaryDirectory.path)
            .appendingPathComponent(
                ".cache")
        return base.appendingPathComponent("wxdb").appendingPathComponent("stations")
    }

    /// An HTTP client for the archives: the network options' timeout and attempts, no JSON check.
    static func client(_ network: NetworkOptions, _ context: Context) -> HTTPClient {
        let json = network.httpClient(context)
        return HTTPClient(
            timeout: json.timeout, retry: json.retry, userAgent: json.userAgent, sleep: json.sleep, now: json.now,
            expectsJSON: false)
    }

    /// How many times one file's download may be cut and resumed before the command gives up
    /// (keeping what arrived for the next run).
    static let resumes = 5

    /// One GET, its failure worded for the archive it went to. With `part` (a static file that
    /// answers `Range`), a body the connection cuts short is kept in `part` and the rest asked for
    /// with `Range: bytes=N-`, in this run or, when it gives up, the next one.
    static func download(
        _ url: URL, _ client: HTTPClient, what: String, kept: String, part: URL? = nil, context: Context
    ) async throws -> Data {
        var have = part.flatMap { FileManager.default.contents(atPath: $0.path) } ?? Data()
        if !have.isEmpty {
            context.note("  \(what): resuming the download kept from an earlier run at byte \(have.count)")
        }
        for _ in 0...resumes {
            let response = try await get(
                url, client, what: what, kept: kept, from: have.count, keepsPart: part != nil, context: context)
            // 206 carries the rest from where it was asked; a 200 (a server that ignores Range) all of it.
            let rangeStart = response.headers["content-range"].flatMap { Self.rangeStart($0) }
            if response.status == 206, rangeStart == have.count {
                have.append(response.body)
            } else {
                have = response.body
            }
            guard let part else { return have }
            if response.complete {
                try? FileManager.default.removeItem(at: part)
                return have
            }
            try? have.write(to: part, options: .atomic)
            context.note("  \(what): the connection was cut after \(have.count) bytes; asking for the rest")
        }
        throw CLIError(
            "the download of \(what) was cut \(resumes + 1) times; the \(have.count) bytes that arrived are kept in \(part?.path ?? "the cache") and the same command resumes from there\(kept)"
        )
    }

    /// N of a `Content-Range: bytes N-M/T` header.
    static func rangeStart(_ header: String) -> Int? {
        guard header.hasPrefix("bytes "), let dash = header.firstIndex(of: "-") else { return nil }
        return Int(header[header.index(header.startIndex, offsetBy: 6)..<dash])
    }

    static func get(
        _ url: URL, _ client: HTTPClient, what: String, kept: String, from offset: Int, keepsPart: Bool,
        context: Context
    ) async throws -> HTTPResponse {
        do {
            let range = offset > 0 ? [(name: "Range", value: "bytes=\(offset)-")] : []
            return try await client.get(url, headers: range, keepsPartialBody: keepsPart) { attempt in
                if let error = attempt.error, let wait = attempt.retryAfter {
                    context.note(
                        "  \(what): attempt \(attempt.number) failed (\(short(error))); retrying in \(String(printf: "%.1f", wait)) s"
                    )
                }
            }
        } catch {
            let host = url.host ?? "the server"
            switch error {
            case .http(503, _):
                throw CLIError(
                    "\(host) answered 503 Service Unavailable for \(what) after \(client.retry.attempts) attempts with backoff: it is overloaded or limiting this address. Wait a few minutes and run the same command again\(kept)"
                )
            case .http(404, _):
                throw CLIError("\(host) has no \(what) (HTTP 404); check the station id and the years\(kept)")
            default:
                throw CLIError("downloading \(what) from \(host) failed: \(short(error))\(kept)")
            }
        }
    }

    static func short(_ error: FetchError) -> String {
        switch error {
        case .http(let status, _): return "HTTP \(status)"
        case .transport(let message): return message
        case .timedOut(let seconds): return "no answer within \(Int(seconds)) s"
        default: return error.description
        }
    }

    /// The ISD station list, from the cache when it is less than 30 days old.
    static func catalogue(_ archives: Archives, _ client: HTTPClient, _ context: Context) async throws
        -> [CatalogueStation]
    {
        let folder = cacheFolder(context)
        let file = folder.appendingPathComponent("isd-history.csv")
        if let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
            let modified = attributes[.modificationDate] as? Date,
            context.now().timeIntervalSince(modified) < 30 * 86400,
            let data = FileManager.default.contents(atPath: file.path)
        {
            return try StationCatalogue.parse(data)
        }
        guard let url = URL(string: archives.catalogue) else {
            throw CLIError("WXDB_ISD_HISTORY_URL '\(archives.catalogue)' is not a URL")
        }
        context.note("Fetching NOAA's station list (\(archives.catalogue)); it is kept for 30 days")
        let data = try await download(url, client, what: "the station list", kept: "", context: context)
        let stations: [CatalogueStation]
        do {
            stations = try StationCatalogue.parse(data)
        } catch let error as StationFormatError {
            throw CLIError("the station list from \(archives.catalogue) cannot be read: \(error.message)")
        }
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? data.write(to: file, options: .atomic)
        return stations
    }

    // MARK: observe stations

    struct StationsOptions: CommandOptions {
        var database = DatabaseOption()
        var network = NetworkOptions()
        var near: String?
        var within: Double?
        var output = FormatOption()

        static var table: [Opt<StationsOptions>] {
            [
                .string("near", "location", "The saved location to list stations around.", required: true, \.near),
                .double("within", "km", "How far to look.", in: 1...500, default: "50", \.within)
            ] + FormatOption.options(\.output) + DatabaseOption.options(\.database)
                + NetworkOptions.options(\.network)
        }
    }

    static var stations: Command {
        Command(
            name: "stations",
            abstract: "List the official stations around a location (NOAA's ISD station list, fetched and cached).",
            discussion: """
                Distance, height difference (station minus location), ISD id (for import-isd and fetch), ICAO code (for
                METAR), name and years with data. The list is kept 30 days in ~/.cache/wxdb/stations.
                """,
            options: StationsOptions.self, run: runStations)
    }

    static func runStations(_ args: StationsOptions, _ context: Context) async throws {
        let store = try args.database.open(context)
        let location = try LocationOption.resolve(args.near ?? "", in: store)
        let list = try await catalogue(Archives(context.environment), client(args.network, context), context)
        let within = args.within ?? 50
        let found = StationCatalogue.near(
            list, latitude: location.latitude, longitude: location.longitude, within: within)
        var report = Report(columns: [
            .init("distance_km", .number(places: 1), label: "km"),
            .init("height_difference_m", .signed(places: 0), label: "height ±m"),
            .init("id", .text), .init("icao", .text), .init("name", .text),
            .init("first_year", .integer, label: "from"), .init("last_year", .integer, label: "to")
        ])
        report.rows = found.map { item in
            let s = item.station
            var height: Double? = nil
            if let a = s.elevation, let b = location.elevation { height = a - b }
            return [
                .number((item.kilometres * 10).rounded() / 10), .number(height), .text(s.id), .text(s.icao),
                .text(s.name), .integer(s.firstYear.map(Int64.init)), .integer(s.lastYear.map(Int64.init))
            ]
        }
        report.meta = [("location", .string(location.name)), ("within_km", .number(within))]
        report.rowsKey = "stations"
        if found.isEmpty {
            throw CLIError(
                "no station in NOAA's list within \(String(printf: "%g", within)) km of \(location.name); try a larger --within"
            )
        }
        try report.render(args.output.format, context)
    }

    // MARK: observe fetch

    struct FetchOptions: CommandOptions {
        var database = DatabaseOption()
        var network = NetworkOptions()
        var location = LocationOption()
        var station: String?
        var from: String?
        var to: String?

        static var table: [Opt<FetchOptions>] {
            LocationOption.options(\.location, help: "The saved location to store the observations for.")
                + [
                    .string(
                        "station", "id",
                        "An ICAO code (EDDH, KDSM: IEM's METAR archive) or an ISD id USAF-WBAN (101470-99999: ISD-Lite).",
                        required: true, \.station)
                ] + DateRangeOptions.options(\.from, \.to) + DatabaseOption.options(\.database)
                + NetworkOptions.options(\.network)
        }

        func validate() throws {
            for (option, value) in [("from", from ?? ""), ("to", to ?? "")]
            where CivilTime.parseLabel(value) == nil || value.utf8.count != 10 {
                throw UsageError("--\(option) '\(value)' is not a date like 2024-01-31")
            }
            if let from, let to, from > to {
                throw UsageError("--from \(from) is after --to \(to); give the earlier date first")
            }
            guard let station, !station.isEmpty,
                station.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            else { throw UsageError("--station '\(station ?? "")' is not a station id like EDDH or 101470-99999") }
        }
    }

    static var fetch: Command {
        Command(
            name: "fetch",
            abstract: "Download an official station's observations (IEM METAR archive or ISD-Lite) and import them.",
            discussion: """
                An ICAO code asks IEM's asos.py for routine reports in UTC and metric units, one request per year; an
                ISD id downloads the ISD-Lite station-years. One request at a time, retried with backoff; each year is
                kept in ~/.cache/wxdb/stations once downloaded, so a run that stops (a 503) resumes where it stopped.
                Nothing is stored until every year is there. Stored as metar:ID or isd:ID by the import rules.
                Endpoints: WXDB_IEM_ASOS_URL, WXDB_ISD_LITE_URL, WXDB_ISD_HISTORY_URL.
                """,
            options: FetchOptions.self, run: runFetch)
    }

    static func runFetch(_ args: FetchOptions, _ context: Context) async throws {
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        let station = args.station!.uppercased()
        guard let first = ZoneTime.span(ofDate: args.from!, timezone: location.timezone)?.start,
            let last = ZoneTime.span(ofDate: args.to!, timezone: location.timezone)?.end
        else { throw CLIError("--from/--to are not dates in \(location.timezone)") }
        let end = min(last, (context.nowUnix - context.nowUnix % 3600) + 1)
        guard end > first else {
            throw CLIError("--from \(args.from!) is in the future; nothing has been observed yet")
        }
        let archives = Archives(context.environment)
        let http = client(args.network, context)
        let isISD = station.contains("-")
        let folder = cacheFolder(context).appendingPathComponent(isISD ? "isd-\(station)" : "metar-\(station)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // One chunk a UTC year, clipped to the range; a chunk wholly in the past is kept once downloaded.
        var chunks: [(label: String, start: Int64, end: Int64, year: Int)] = []
        var year = CivilTime.date(days: Int(first / 86400)).year
        while true {
            let yearStart = Int64(CivilTime.days(year: year, month: 1, day: 1)) * 86400
            let yearEnd = Int64(CivilTime.days(year: year + 1, month: 1, day: 1)) * 86400
            if yearStart >= end { break }
            let start = max(yearStart, floorDay(first))
            let stop = min(yearEnd, floorDay(end - 1) + 86400)
            chunks.append(
                (
                    isISD ? "\(year)" : "\(CivilTime.dateString(unix: start))_\(CivilTime.dateString(unix: stop))",
                    start, stop, year
                ))
            year += 1
        }
        var reports: [StationReport] = []
        var base = OfficialImport(
            format: isISD ? "ISD-Lite" : "IEM ASOS CSV", variables: isISD ? ISD.liteVariables : [])
        var downloaded = 0
        var kept = 0
        var reused = 0
        for (index, chunk) in chunks.enumerated() {
            let file = folder.appendingPathComponent(chunk.label + (isISD ? ".gz" : ".csv"))
            var data = FileManager.default.contents(atPath: file.path)
            if data != nil {
                reused += 1
                kept += 1
            } else {
                let url: URL?
                if isISD {
                    url = URL(string: "\(archives.isdLite)/\(chunk.year)/\(station)-\(chunk.year).gz")
                } else {
                    url = asosURL(archives.asos, station: station, start: chunk.start, end: chunk.end)
                }
                guard let url else {
                    throw CLIError(
                        "the station archive address is not a URL; check WXDB_IEM_ASOS_URL/WXDB_ISD_LITE_URL")
                }
                let what =
                    isISD
                    ? "ISD-Lite \(station) \(chunk.year)"
                    : "METAR \(station) \(chunk.label.replacing("_", with: " to "))"
                context.note("Downloading \(what) (\(index + 1) of \(chunks.count))")
                let keptNote =
                    kept > 0
                    ? "; the \(kept) of \(chunks.count) parts already downloaded are kept in \(folder.path) and will not be asked for again. Nothing was stored yet"
                    : ". Nothing was stored"
                let body = try await download(
                    url, http, what: what, kept: keptNote,
                    part: isISD ? folder.appendingPathComponent(chunk.label + ".gz.part") : nil, context: context)
                // Kept only when complete: a part reaching into the current day is asked for again next time.
                if chunk.end <= (context.nowUnix - context.nowUnix % 3600) - 86400 {
                    if (try? body.write(to: file, options: .atomic)) != nil { kept += 1 }
                }
                data = body
                downloaded += 1
            }
            do {
                var bytes = data!
                if Gzip.isGzip(bytes) { bytes = try Gzip.decompress(bytes) }
                if isISD {
                    reports += try ISD.readLite(bytes)
                } else {
                    reports += try METAR.readIEM(bytes, station: nil, into: &base)
                }
            } catch let error as StationFormatError {
                try? FileManager.default.removeItem(at: file)
                throw CLIError(
                    "the download of \(station) (\(chunk.label)) cannot be read: \(error.description). Nothing was stored"
                )
            }
        }
        if reports.isEmpty {
            throw CLIError(
                "\(isISD ? "NCEI's ISD-Lite archive" : "IEM's archive") holds no reports of \(station) from \(args.from!) to \(args.to!); check the id with 'wxdb observe stations --near \(location.name)'. Nothing was stored"
            )
        }
        if isISD {
            // Where the station is comes from the station list (ISD-Lite files do not say).
            if let list = try? await catalogue(archives, http, context),
                let found = StationCatalogue.find(station, in: list)
            {
                base.place = StationPlace(
                    latitude: found.latitude, longitude: found.longitude, elevation: found.elevation, name: found.name)
            }
        }
        base.reportsRead = reports.count
        HourRule.match(reports, into: &base, from: first, to: last)
        let source = (isISD ? "isd:" : "metar:") + station
        var stationImport = StationImport(variables: base.variables)
        stationImport.hours = base.hours
        stationImport.firstHour = base.firstHour
        stationImport.lastHour = base.lastHour
        try store.replaceStationObservations(
            stationImport, locationID: location.id, source: source, recordedAt: context.nowUnix)
        context.note("Downloaded \(downloaded) part(s), reused \(reused) kept from an earlier run")
        if let place = base.place {
            ObserveCommand.StationFiles.warnIfFar(place, station: station, location: location, context: context)
        }
        try ObserveCommand.StationFiles.report(
            base, path: isISD ? "NCEI ISD-Lite" : "IEM asos.py", location: location, source: source, context: context)
    }

    static func floorDay(_ t: Int64) -> Int64 { t - ((t % 86400) + 86400) % 86400 }

    /// asos.py for routine reports (report_type=3) in UTC and metric units, from `start` up to `end`.
    static func asosURL(_ base: String, station: String, start: Int64, end: Int64) -> URL? {
        guard var components = URLComponents(string: base) else { return nil }
        let a = CivilTime.date(days: Int(start / 86400))
        let b = CivilTime.date(days: Int(end / 86400))
        // IEM drops the K of US airports in its ids.
        let id = station.count == 4 && station.hasPrefix("K") ? String(station.dropFirst()) : station
        components.queryItems = [
            ("station", id), ("data", "tmpc,dwpc,relh,drct,sknt,gust,p01m,mslp"), ("year1", "\(a.year)"),
            ("month1", "\(a.month)"), ("day1", "\(a.day)"), ("year2", "\(b.year)"), ("month2", "\(b.month)"),
            ("day2", "\(b.day)"), ("tz", "Etc/UTC"), ("format", "onlycomma"), ("latlon", "yes"), ("elev", "yes"),
            ("missing", "M"), ("trace", "T"), ("direct", "no"), ("report_type", "3")
        ].map { URLQueryItem(name: $0.0, value: $0.1) }
        return components.url
    }
}
