import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Brings observations in from Open-Meteo's historical weather API (reanalysis) as source `era5`.
public struct Backfill {
    /// Days per request: long ranges are fetched in chunks so each answer stays small.
    public static let chunkDays = 92
    /// The archive API has no precipitation probability; everything else wxdb keeps it has.
    public static let variables = Variables.hourly.filter { !$0.isProbability }.map(\.name)

    let store: any Store
    let client: HTTPClient
    let endpoints: Endpoints

    public init(store: any Store, client: HTTPClient, endpoints: Endpoints) {
        self.store = store
        self.client = client
        self.endpoints = endpoints
    }

    public struct Result: Sendable, Equatable {
        public var hours = 0
        public var requests = 0
        /// When the range reached past `now`: the last hour kept (nil if none), later ones are not observed yet.
        public var stoppedAt: Int64?
        public var stoppedEarly = false
        /// Values left empty because no weather can have them (`PhysicalRange`).
        public var outOfRange = RangeFilter()
    }

    /// Fetches `from...to` (local dates `YYYY-MM-DD`, inclusive) and upserts them; running it
    /// again over the same range changes nothing. Each chunk is stored in one transaction; a
    /// failure after some chunks throws `BackfillError.failedPartway`, which says what was kept.
    public func run(location: Location, fromDate: String, toDate: String, now: Int64) async throws -> Result {
        guard let start = CivilTime.parseLabel(fromDate), let requestedEnd = CivilTime.parseLabel(toDate) else {
            throw BackfillError.badRange("dates must be YYYY-MM-DD")
        }
        guard start <= requestedEnd else { throw BackfillError.badRange("--from \(fromDate) is after --to \(toDate)") }
        // Nothing after `now` has been observed: the range stops at today's local date, and only
        // hours at or before `now` are kept (the archive would answer later ones with forecasts).
        guard
            let today = CivilTime.parseLabel(
                ZoneTime.date(of: now, timezone: location.timezone == "auto" ? "UTC" : location.timezone))
        else {
            throw BackfillError.badRange("the location's time zone is not usable")
        }
        guard start <= today else {
            throw BackfillError.badRange("--from \(fromDate) is in the future; observations exist only for past hours")
        }
        let end = min(requestedEnd, today)
        var result = Result()
        result.stoppedEarly = requestedEnd >= today
        var chunkStart = start
        while chunkStart <= end {
            let chunkEnd = min(end, chunkStart + Int64(Self.chunkDays - 1) * 86400)
            let query: [(String, String)] = [
                ("latitude", String(location.latitude)), ("longitude", String(location.longitude)),
                ("start_date", CivilTime.dateString(unix: chunkStart)),
                ("end_date", CivilTime.dateString(unix: chunkEnd)),
                ("hourly", Self.variables.joined(separator: ",")),
                ("timezone", location.timezone == "auto" ? "auto" : location.timezone), ("timeformat", "unixtime"),
                ("temperature_unit", "celsius"), ("wind_speed_unit", "kmh"), ("precipitation_unit", "mm")
            ]
            do {
                let url = try endpoints.url(endpoints.archive, query)
                // Counted before the answer: a request that fails was still sent.
                result.requests += 1
                let response = try await client.get(url)
                let decoded = try ForecastDecoder.decodeSingle(response.body, defaultModel: "era5")
                if let problem = GridDistance.mismatch(
                    location: location.name, latitude: location.latitude, longitude: location.longitude,
                    gridLatitude: decoded.latitude, gridLongitude: decoded.longitude)
                {
                    throw BackfillError.refused(problem)
                }
                let saved = try save(decoded, location: location, now: now)
                result.outOfRange.merge(RangeFilter(refused: decoded.outOfRange))
                result.hours += saved.hours
                if result.stoppedEarly, let last = saved.last { result.stoppedAt = max(result.stoppedAt ?? last, last) }
            } catch {
                // The server's texts may quote the key back.
                let reason = HTTPClient.scrub(userMessage(for: error), secret: endpoints.apiKey)
                throw BackfillError.failedPartway(
                    reason: reason, stored: result, from: fromDate,
                    through: chunkStart > start ? CivilTime.dateString(unix: chunkStart - 86400) : nil,
                    failedFrom: CivilTime.dateString(unix: chunkStart))
            }
            chunkStart = chunkEnd + 86400
        }
        return result
    }

    /// Upserts one chunk's hours up to `now` as `era5` observations in one transaction; hours the
    /// archive does not have yet (all null) are skipped. Returns the count and the last hour kept.
    func save(_ decoded: ForecastResponse, location: Location, now: Int64) throws -> (hours: Int, last: Int64?) {
        guard let series = decoded.models.first else { return (0, nil) }
        let hours = try store.saveObservations(
            series, through: now, locationID: location.id, source: "era5", recordedAt: now)
        return (hours, series.hourlyTimes.filter { $0 <= now }.max())
    }
}

public enum BackfillError: Error, CustomStringConvertible {
    case badRange(String)
    /// The archive's answer is not for this location.
    case refused(String)
    /// A chunk failed; `stored` is what earlier chunks (`from` through `through`) kept.
    case failedPartway(reason: String, stored: Backfill.Result, from: String, through: String?, failedFrom: String)

    public var description: String {
        switch self {
        case .badRange(let why):
            return "invalid date range: \(why); give --from and --to as YYYY-MM-DD, the earlier first"
        case .refused(let why): return why
        case .failedPartway(let reason, let stored, let from, let through, let failedFrom):
            guard let through else { return "\(reason). Nothing was stored" }
            return
                "\(reason). Before this failure \(stored.hours) hours of era5 observations from \(from) through \(through) "
                + "were stored and are kept; run the command again with --from \(failedFrom) for the rest (stored hours are not changed)"
        }
    }
}
