// A server that is not trusted (issue 11, points 7-10): oversized and endless bodies, 429 answers
// that say how long to wait, keys echoed back, batch answers that do not match their request.
// Waits go through a recording sleeper: these tests count attempts and asked-for waits, never seconds.
import Foundation
import TestSupport
import Testing
import WxReplay
import WxSQLite

@testable import WxCore
@testable import WxFetcher
@testable import WxStore
@testable import WxStoreSQLite

/// Records the waits an `HTTPClient` asks for and returns at once.
final class RecordingSleeper: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [TimeInterval] = []
    var waits: [TimeInterval] { lock.withLock { list } }
    var sleep: @Sendable (TimeInterval) async throws -> Void {
        { [self] seconds in lock.withLock { list.append(seconds) } }
    }
}

@Suite("HTTP client against a hostile server")
struct HostileHTTPTests {
    /// 2026-07-26T12:00:20Z: twenty seconds into a minute.
    static let twentyPast = Date(timeIntervalSince1970: 1_785_067_220)

    static func client(
        _ sleeper: RecordingSleeper, attempts: Int = 3, maxTotal: TimeInterval = 6000,
        maxBodyBytes: Int = HTTPClient.defaultMaxBodyBytes
    ) -> HTTPClient {
        HTTPClient(
            timeout: 60,
            retry: RetryPolicy(attempts: attempts, baseDelay: 0.01, maxDelay: 0.05, maxTotal: maxTotal, jitter: 0),
            userAgent: "wxdb-tests", maxBodyBytes: maxBodyBytes, sleep: sleeper.sleep, now: { twentyPast })
    }

    @Test("an endless chunked body is cut off at the limit, once, with a clear error")
    func endlessBodyCapped() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.endlessBody, times: 3)
        let sleeper = RecordingSleeper()
        let (result, attempts) = await Support.fetch(
            Self.client(sleeper, maxBodyBytes: 1 << 20), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.failure == .tooLarge(limit: 1 << 20))
        #expect(attempts.count == 1, "an oversized answer is not fetched again")
        #expect(result.failure?.description.contains("1 MiB") == true)
        #expect(server.requests.count == 1)
    }

    @Test("a declared Content-Length past the limit is refused before the body")
    func declaredLengthCapped() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let (result, _) = await Support.fetch(
            Self.client(RecordingSleeper(), maxBodyBytes: 1000),
            Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        #expect(result.failure == .tooLarge(limit: 1000))
    }

    @Test("a body within the limit is returned whole")
    func withinLimit() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let response = try await Self.client(RecordingSleeper()).get(
            Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        #expect(try JSONParser.parse(response.body)["latitude"]?.numberValue == 1)
    }

    struct Wait: Sendable, CustomStringConvertible {
        var fault: ReplayServer.Fault
        var waits: [TimeInterval]
        var requests: Int
        var succeeds: Bool
        var description: String { "\(fault)" }
    }

    @Test(
        "429 waits what the server asks: Retry-After, else the next minute; the hourly and daily limits are not retried",
        arguments: [
            // Retry-After in seconds wins over the reason.
            Wait(
                fault: .tooManyRequests(reason: ReplayServer.minutelyLimitReason, retryAfter: "7"), waits: [7],
                requests: 2, succeeds: true),
            // An HTTP date: 2026-07-26T12:00:50Z is 30 s after the injected clock.
            Wait(
                fault: .tooManyRequests(
                    reason: "Too many concurrent requests", retryAfter: "Sun, 26 Jul 2026 12:00:50 GMT"), waits: [30],
                requests: 2, succeeds: true),
            // "Try again in one minute" at 20 s past: the next minute and a second of margin.
            Wait(
                fault: .tooManyRequests(reason: ReplayServer.minutelyLimitReason, retryAfter: nil), waits: [41],
                requests: 2, succeeds: true),
            Wait(
                fault: .tooManyRequests(reason: ReplayServer.hourlyLimitReason, retryAfter: nil), waits: [],
                requests: 1, succeeds: false),
            Wait(
                fault: .tooManyRequests(reason: ReplayServer.dailyLimitReason, retryAfter: nil), waits: [], requests: 1,
                succeeds: false)
        ])
    func rateLimitWaits(_ case_: Wait) async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(case_.fault)
        let sleeper = RecordingSleeper()
        let (result, attempts) = await Support.fetch(
            Self.client(sleeper), Support.url(server, "/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        #expect(sleeper.waits == case_.waits)
        #expect(server.requests.count == case_.requests)
        #expect((result.success != nil) == case_.succeeds)
        #expect(attempts.first?.retryAfter == case_.waits.first)
        if case_.requests == 1 {
            let text = result.failure?.description ?? ""
            #expect(
                text.contains("does not retry") && (text.contains("next hour") || text.contains("tomorrow")), "\(text)")
        }
    }

    @Test("a minutely 429 whose wait would pass the call's time budget is not waited for")
    func waitBeyondBudget() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.rateLimit, times: 5)
        let sleeper = RecordingSleeper()
        let (result, attempts) = await Support.fetch(
            Self.client(sleeper, maxTotal: 20), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(sleeper.waits.isEmpty)
        #expect(attempts.count == 1)
        #expect(result.failure == .rateLimited(reason: ReplayServer.minutelyLimitReason))
    }

    @Test("a 429 storm ends after `attempts` tries, each after the minute's wait")
    func stormCountsAttempts() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.rateLimit, times: 10)
        let sleeper = RecordingSleeper()
        let (result, attempts) = await Support.fetch(
            Self.client(sleeper, attempts: 3), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(attempts.count == 3)
        #expect(sleeper.waits == [41, 41])
        #expect(result.failure?.description.contains("waits for the next minute") == true)
    }

    @Test("a key echoed in the server's reason reaches no error text", arguments: [400, 401, 429, 500])
    func keyEchoScrubbed(status: Int) async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.echoKey(status: status), times: 3)
        let attemptsLog = Support.Attempts()
        let client = Self.client(RecordingSleeper(), attempts: 2)
        var failure: FetchError?
        do {
            _ = try await client.get(Support.url(server, "/v1/forecast?latitude=1&longitude=2&apikey=S3CRETKEY")) {
                attemptsLog.add($0)
            }
        } catch {
            failure = error
        }
        let texts = [failure?.description ?? ""] + attemptsLog.all.map { ($0.error?.description ?? "") + $0.url }
        #expect(failure != nil)
        #expect(texts.allSatisfy { !$0.contains("S3CRETKEY") }, "\(texts)")
        #expect(failure?.description.contains("[API key]") == true)
    }

    @Test("a key where a long reason is cut off leaves no part of it")
    func keyAtClipPoint() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.status(400, reason: String(repeating: "x", count: 195) + " S3CRETKEY and more"))
        let (result, _) = await Support.fetch(
            Self.client(RecordingSleeper()), Support.url(server, "/v1/forecast?latitude=1&longitude=2&apikey=S3CRETKEY")
        )
        let text = result.failure?.description ?? ""
        #expect(!text.contains("S3CRE"), "\(text)")
        #expect(text.contains("bytes)"), "the reason is clipped: \(text)")
    }

    @Test("scrub removes the key as sent and percent-encoded, and any apikey= item")
    func scrubForms() {
        #expect(
            HTTPClient.scrub("Invalid key ab/c+d (ab%2Fc%2Bd) at ?x=1&apikey=zz", secret: "ab/c+d")
                == "Invalid key [API key] ([API key]) at ?x=1")
        #expect(HTTPClient.scrub("nothing secret", secret: nil) == "nothing secret")
    }
}

@Suite("Batch answers matched to their locations")
struct BatchMatchTests {
    static func location(_ id: Int64, _ name: String, _ lat: Double, _ lon: Double) -> Location {
        Location(
            id: id, name: name, latitude: lat, longitude: lon, elevation: nil, timezone: "UTC", models: ["best_match"],
            createdAt: 0)
    }
    static let berlin = location(1, "Berlin", 52.52, 13.41)
    static let florida = location(2, "Florida", 27.0, -81.0)

    static func element(_ lat: Double, _ lon: Double, id: Int?) -> ForecastDecoder.Element {
        ForecastDecoder.Element(
            locationID: id,
            result: .success(
                ForecastResponse(
                    latitude: lat, longitude: lon, elevation: nil, utcOffsetSeconds: 0, timezone: "GMT", locationID: id,
                    current: nil, models: [ModelForecast(model: "best_match")])))
    }
    static let broken = ForecastDecoder.Element(locationID: 1, result: .failure(.missingField("latitude")))

    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var elements: [ForecastDecoder.Element]
        /// Names stored, and names refused.
        var stored: [String]
        var refused: [String]
        var description: String { name }
    }

    @Test(
        "each element goes to the location its location_id names, and only if its grid point is near",
        arguments: [
            Case(
                name: "request order", elements: [element(52.525, 13.4, id: nil), element(27.0, -81.0, id: 1)],
                stored: ["Berlin", "Florida"], refused: []),
            Case(
                name: "swapped order, ids kept",
                elements: [element(27.0, -81.0, id: 1), element(52.525, 13.4, id: nil)],
                stored: ["Berlin", "Florida"], refused: []),
            Case(
                name: "ids pointing at the other location",
                elements: [element(52.525, 13.4, id: 1), element(27.0, -81.0, id: nil)],
                stored: [], refused: ["Berlin", "Florida"]),
            Case(
                name: "no ids at all: by position",
                elements: [element(52.525, 13.4, id: nil), element(27.0, -81.0, id: nil)],
                stored: ["Berlin", "Florida"], refused: []),
            Case(
                name: "Florida's element far away",
                elements: [element(52.525, 13.4, id: nil), element(52.5, 13.4, id: 1)],
                stored: ["Berlin"], refused: ["Florida"]),
            Case(
                name: "one element for two", elements: [element(52.525, 13.4, id: nil)],
                stored: ["Berlin"], refused: ["Florida"]),
            Case(
                name: "two claim Berlin", elements: [element(52.525, 13.4, id: nil), element(52.525, 13.4, id: 0)],
                stored: [], refused: ["Berlin", "Florida"]),
            Case(
                name: "Florida's element cannot be decoded", elements: [element(52.525, 13.4, id: nil), broken],
                stored: ["Berlin"], refused: ["Florida"]),
            Case(
                name: "an id outside the request",
                elements: [element(52.525, 13.4, id: nil), element(27.0, -81.0, id: 7)],
                stored: ["Berlin"], refused: ["Florida"])
        ])
    func matching(_ c: Case) {
        let (pairs, refused) = Ingestor.match(c.elements, to: [Self.berlin, Self.florida])
        #expect(pairs.map(\.0.name) == c.stored)
        #expect(refused.map(\.0.name) == c.refused)
        for (location, element) in pairs {
            #expect(
                GridDistance.kilometres(
                    latitude: location.latitude, longitude: location.longitude,
                    latitude: element.latitude, longitude: element.longitude) < GridDistance.maxKilometres)
        }
    }

    @Test("distances: a grid cell away is near, another city is not")
    func distances() {
        #expect(
            abs(GridDistance.kilometres(latitude: 52.52, longitude: 13.41, latitude: 48.14, longitude: 11.58) - 504) < 2
        )  // Berlin-Munich
        #expect(
            GridDistance.mismatch(
                location: "Berlin", latitude: 52.52, longitude: 13.41, gridLatitude: 52.5, gridLongitude: 13.425) == nil
        )
        let far = GridDistance.mismatch(
            location: "Berlin", latitude: 52.52, longitude: 13.41, gridLatitude: 27, gridLongitude: -81)
        #expect(far?.contains("27, -81") == true && far?.contains("52.52, 13.41") == true)
    }
}

@Suite("Ingest through a hostile replay server", .serialized)
struct HostileIngestTests {
    static func store() throws -> (SQLiteStore, String) {
        let folder = Scratch.folder("fetcher")
        return (try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path), folder.path)
    }

    static func endpoints(_ server: ReplayServer, key: String? = nil) -> Endpoints {
        Endpoints(
            forecast: server.baseURL + "/v1/forecast", archive: server.baseURL + "/v1/archive",
            geocoding: server.baseURL + "/v1/search", meta: server.baseURL + "/data", apiKey: key)
    }

    @Test("a location removed while the ingest runs is reported as removed, not as a raw SQLite error")
    func locationRemovedMeanwhile() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let (store, folder) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let kept = try store.addLocation(
            name: "Kept", latitude: 10, longitude: 20, elevation: nil, timezone: "UTC", models: [], now: 0)
        let gone = try store.addLocation(
            name: "Gone", latitude: 11, longitude: 21, elevation: nil, timezone: "UTC", models: [], now: 0)
        // Looked up by the ingest, then removed by another command before the answer is stored.
        _ = try store.removeLocation(named: "Gone", purge: true)
        let ingestor = Ingestor(
            store: store, client: Support.client(timeout: 60), endpoints: Self.endpoints(server),
            now: { Support.fixedNow })
        let summary = await ingestor.run([kept, gone], options: IngestOptions())
        #expect(summary.stored == 1)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        #expect(summary.removed == ["Gone"])
        #expect(summary.line.contains("1 removed while it ran (Gone)"))
        #expect(!summary.line.contains("SQLite"))
        #expect(try store.db.scalarInt("SELECT count(*) FROM forecast_runs") == 1)
    }

    @Test("an answer with one element too many stores the one asked for, without 'not valid JSON'")
    func extraElement() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.registerForecast(
            latitude: 41.0, longitude: 2.0,
            body: try Support.fixture("SYNTHETIC-servertest-multi-location-unixtime.json"))
        let (store, folder) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let here = try store.addLocation(
            name: "Here", latitude: 41.0, longitude: 2.0, elevation: nil, timezone: "UTC", models: [], now: 0)
        let ingestor = Ingestor(
            store: store, client: Support.client(timeout: 60), endpoints: Self.endpoints(server),
            now: { Support.fixedNow })
        let summary = await ingestor.run([here], options: IngestOptions())
        #expect(summary.failed.isEmpty, "\(summary.line)")
        #expect(summary.stored == 1)
        #expect(!summary.line.contains("not valid JSON"))
    }
}
