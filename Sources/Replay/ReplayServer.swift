// The local replay server used by tests and the offline demo. It speaks just enough HTTP/1.1
// (persistent connections for plain answers, `Connection: close` after a fault) to stand in for
// the Open-Meteo hosts, and can inject the failures a real network produces so the fetcher's
// retry logic is exercised against real sockets rather than mocks.
// Foundation: Thread and DispatchSemaphore run its connections (a test server, not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTP/1.1 server on 127.0.0.1 that imitates the Open-Meteo forecast, single-runs, archive,
/// geocoding and meta.json endpoints and injects faults on demand.
///
/// All mutable state sits behind one lock, so the class is safe to use from tests while its
/// connection threads run; that is what `@unchecked Sendable` promises here.
public final class ReplayServer: @unchecked Sendable {
    /// A failure to inject. Faults are queued per path prefix and each one is consumed by the
    /// next matching request, before normal serving.
    public enum Fault: Sendable, Equatable {
        /// Answer with this status and an Open-Meteo error body (`reason` or a default text).
        case status(Int, reason: String?)
        /// Wait, then serve normally (for client timeouts).
        case delay(seconds: Double)
        /// Announce the full Content-Length but send only half the body, then close.
        case truncatedBody
        /// Close with SO_LINGER 0 (TCP RST) right after reading the request.
        case reset
        /// 429 with the Open-Meteo minutely-limit reason.
        case rateLimit
        /// 302 with this Location.
        case redirect(to: String)
        /// 200 with `text/html` and an HTML body (captive portal, misconfigured proxy).
        case wrongContentType
        /// Send the real body at this rate.
        case trickle(bytesPerSecond: Int)
        /// 200 with Content-Length 0 (observed for `latitude=&longitude=`).
        case emptyBody
        /// 200 JSON with "Unexpected error while streaming data: x" appended, as Open-Meteo does
        /// when an error happens after streaming began.
        case notJSON
        /// 429 with this reason and, when given, a `Retry-After` header (seconds or an HTTP date).
        case tooManyRequests(reason: String, retryAfter: String?)
        /// This status with a reason that quotes the request's `apikey` back ("Invalid API key …").
        case echoKey(status: Int)
        /// A multi-location answer with its elements in reverse order (each keeps its `location_id`).
        case swappedOrder
        /// A multi-location answer in request order whose `location_id`s point at the next location.
        case wrongLocationID
        /// The first element's grid point moved to this coordinate (another place's forecast).
        case farGridPoint(latitude: Double, longitude: Double)
        /// Every element's `timezone` replaced by a name of this many characters.
        case hugeTimezone(length: Int)
        /// A Single Runs answer with the window of the run this many seconds from the one asked
        /// for (an archive that answers with another run's hours).
        case otherRun(seconds: Int)
        /// 200 with `Transfer-Encoding: chunked` and a body that never ends (until the client
        /// hangs up, or after `endlessBodyCap` bytes as a safety net for the server).
        case endlessBody
        /// 200 JSON whose body, sent with this `Content-Encoding` (`gzip`, `br` or `zstd`), is at
        /// most 0.5 MB on the wire and unpacks to 512 MiB or more of zeros (`Fixtures/bombs`).
        case bomb(encoding: String)
    }

    /// The compressed bodies `Fault.bomb` sends, by encoding: what each unpacks to is in its name.
    public static let bombFixtures = [
        "gzip": "bombs/zeros-512MiB.gz", "br": "bombs/zeros-1GiB.br", "zstd": "bombs/zeros-1GiB.zst"
    ]

    /// Where an endless body stops if the client never hangs up.
    public static let endlessBodyCap = 4 << 30

    /// The reason texts Open-Meteo uses when a limit is hit.
    public static let minutelyLimitReason = "Minutely API request limit exceeded. Please try again in one minute."
    public static let hourlyLimitReason = "Hourly API request limit exceeded. Please try again in the next hour."
    public static let dailyLimitReason = "Daily API request limit exceeded. Please try again tomorrow."

    private let fixtures: URL
    private let lock = NSLock()
    private var listenFD: Int32 = -1
    private var boundPort = 0
    private var acceptDone: DispatchSemaphore?
    /// Connections open now, so `stop()` can end those idling between requests.
    private var clients: Set<Int32> = []

    // Guarded by `lock`.
    private var faults: [String: [Fault]] = [:]
    private var log: [String] = []
    private var forecasts: [(lat: Double, lon: Double, body: Data)] = []
    private var geocoding: [String: Data] = [:]
    private var metas: [String: Int] = [:]
    private var _runInterval = 3 * 3600
    private var _ensembleDispersion = 1.0
    private var _now: @Sendable () -> Date = { Date() }

    /// Creates a server that reads default bodies (geocoding "hollywood") from `fixtures`.
    public init(fixtures: URL) {
        self.fixtures = fixtures
    }

    deinit { stop() }

    // MARK: Configuration

    /// The path of the Single Runs API (`single-runs-api.open-meteo.com/v1/forecast` for real):
    /// its own prefix, so faults and request counts can target it apart from `/v1/forecast`.
    public static let singleRunsPath = "/single-runs/v1/forecast"

    /// Seconds per synthetic model run of blends (`best_match`) and models not in `ReplayModels`;
    /// the run number is `floor(now / runIntervalSeconds)`. Known models keep their own cadence.
    public var runIntervalSeconds: Int {
        get { lock.withLock { _runInterval } }
        set { lock.withLock { _runInterval = max(1, newValue) } }
    }

    /// The Ensemble API's spread next to a calibrated ensemble's (EnsembleReplay.swift): 1 is
    /// calibrated, below 1 under-dispersive, above 1 over-dispersive.
    public var ensembleDispersion: Double {
        get { lock.withLock { _ensembleDispersion } }
        set { lock.withLock { _ensembleDispersion = max(0, newValue) } }
    }

    /// The clock used for "today", `current` and the run number. Inject a fixed date in tests.
    public var now: @Sendable () -> Date {
        get { lock.withLock { _now } }
        set { lock.withLock { _now = newValue } }
    }

    /// The synthetic model run number at the current clock.
    public var currentRun: Int {
        let (clock, interval) = lock.withLock { (_now, _runInterval) }
        return Int((clock().timeIntervalSince1970 / Double(interval)).rounded(.down))
    }

    /// The schedule the server uses for a `models=` name: its domain's, or for blends and unknown
    /// names one run every `runIntervalSeconds`, available at once.
    public func model(named name: String) -> ReplayModel {
        if let known = ReplayModels.model(named: name) { return known }
        return ReplayModel(
            domain: name, cadence: runIntervalSeconds, delay: 0, archiveStart: ReplayModels.defaultArchiveStart)
    }

    /// The initialisation time (Unix seconds) of the run the live endpoint serves for `model` now.
    public func latestRun(model name: String) -> Int {
        model(named: name).latestRun(at: Int(now().timeIntervalSince1970.rounded(.down)))
    }

    /// The bound port (0 before `start()`).
    public var port: Int { lock.withLock { boundPort } }

    /// "http://127.0.0.1:PORT".
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Serves `body` for forecast requests within 0.01° of this coordinate instead of synthesizing.
    public func registerForecast(latitude: Double, longitude: Double, body: Data) {
        lock.withLock { forecasts.append((latitude, longitude, body)) }
    }

    /// Serves `body` for `/v1/search?name=` (matched case-insensitively).
    public func registerGeocoding(name: String, body: Data) {
        lock.withLock { geocoding[name.lowercased()] = body }
    }

    /// Makes `/data/<model>/static/meta.json` answer with this initialisation time.
    public func registerMeta(model: String, lastRunInitialisationTime: Int) {
        lock.withLock { metas[model] = lastRunInitialisationTime }
    }

    // MARK: Faults and log

    /// Queues one fault for the next request whose path starts with `path`.
    public func enqueue(_ fault: Fault, path: String = "/v1/forecast") {
        enqueue(fault, times: 1, path: path)
    }

    /// Queues the same fault `times` times.
    public func enqueue(_ fault: Fault, times: Int, path: String = "/v1/forecast") {
        guard times > 0 else { return }
        lock.withLock { faults[path, default: []].append(contentsOf: Array(repeating: fault, count: times)) }
    }

    /// Every non-control request target (path and query) in arrival order.
    public var requests: [String] { lock.withLock { log } }

    /// How many logged requests had a path starting with `path` (e.g. `singleRunsPath`).
    public func requestCount(path: String) -> Int {
        requests.filter { $0.hasPrefix(path) }.count
    }

    /// Clears the request log.
    public func resetLog() { lock.withLock { log.removeAll() } }

    /// Clears faults and the request log.
    public func resetFaults() {
        lock.withLock {
            faults.removeAll()
            log.removeAll()
        }
    }

    /// Takes the next fault for `path`. The longest matching prefix wins so a specific queue
    /// ("/v1/forecast") is not starved by a catch-all ("/").
    private func nextFault(for path: String) -> Fault? {
        lock.withLock {
            let keys = faults.keys.filter { path.hasPrefix($0) && !(faults[$0]?.isEmpty ?? true) }
            guard let key = keys.max(by: { $0.count < $1.count }) else { return nil }
            return faults[key]!.removeFirst()
        }
    }

    // MARK: Lifecycle

    /// Binds 127.0.0.1 (`port` 0 = any free port) and starts accepting on a background thread.
    public func start(port requested: Int = 0) throws {
        let (fd, port) = try Socket.listenLoopback(port: requested)
        let done = DispatchSemaphore(value: 0)
        lock.withLock {
            listenFD = fd
            boundPort = port
            acceptDone = done
        }
        let thread = Thread { [weak self] in
            // A thread per connection: the suite's concurrency is tiny, and a blocked fault
            // (delay, trickle) must not hold up other requests.
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break  // shutdown() by stop(), or the fd is gone
                }
                guard let server = self else {
                    close(client)
                    break
                }
                Socket.configureAccepted(client)
                let worker = Thread { server.handle(client) }
                worker.stackSize = 1 << 20
                worker.start()
            }
            close(fd)
            done.signal()
        }
        thread.name = "ReplayServer.accept"
        thread.start()
    }

    /// Stops accepting. Connections already being served finish on their own.
    public func stop() {
        let (fd, done) = lock.withLock { () -> (Int32, DispatchSemaphore?) in
            let r = (listenFD, acceptDone)
            listenFD = -1
            acceptDone = nil
            return r
        }
        guard fd >= 0 else { return }
        // Under the lock a connection is removed under before it is closed: an fd number that
        // was closed and reused meanwhile is never shut down.
        lock.withLock { for client in clients { shutdown(client, Int32(SHUT_RD)) } }
        // shutdown() wakes the thread blocked in accept(); that thread closes the fd, so the fd
        // number cannot be reused under it.
        shutdown(fd, Int32(SHUT_RDWR))
        _ = done?.wait(timeout: .now() + 2)
    }

    // MARK: Connection handling

    private struct Response {
        var status: Int
        var contentType = "application/json; charset=utf-8"
        var body: Data
        var headers: [(String, String)] = []
    }

    /// Serves a connection's requests until one asks to close, a fault ends it, or the client
    /// goes quiet. Persistent like Open-Meteo's own servers: a client that opened a new connection
    /// for every request would measure connection set-up, not the fetcher (and FoundationNetworking
    /// on Linux keeps polling a new connection for writability until its first answer arrives).
    private func handle(_ fd: Int32) {
        lock.withLock { _ = clients.insert(fd) }
        var next = Next.keepOpen
        while next == .keepOpen { next = serve(fd) }
        lock.withLock { _ = clients.remove(fd) }
        if next == .reset {
            Socket.resetAndClose(fd)
            return
        }
        // Orderly close: FIN after the last byte, so the client sees the whole response.
        shutdown(fd, Int32(SHUT_WR))
        close(fd)
    }

    /// What becomes of a connection after a request.
    private enum Next { case keepOpen, close, reset }

    /// Answers one request.
    private func serve(_ fd: Int32) -> Next {
        guard let head = Socket.readRequestHead(fd) else { return .close }
        let requestLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let parts = requestLine.split(separator: " ")
        guard parts.count >= 2 else {
            write(fd, Response(status: 400, body: Self.errorBody("Malformed request line")))
            return .close
        }
        let method = String(parts[0])
        let target = String(parts[1])
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")

        if path.hasPrefix("/_control/") {
            write(fd, control(path: path, target: target))
            return .close
        }
        lock.withLock { log.append(target) }

        guard method == "GET" || method == "HEAD" else {
            write(fd, Response(status: 405, body: Self.errorBody("Method not allowed")))
            return .close
        }

        switch nextFault(for: path) {
        case nil:
            let keep = !head.lowercased().contains("\r\nconnection: close")
            write(fd, route(path: path, target: target), keepAlive: keep)
            return keep ? .keepOpen : .close
        case .tooManyRequests(let reason, let retryAfter)?:
            write(
                fd,
                Response(
                    status: 429, body: Self.errorBody(reason), headers: retryAfter.map { [("Retry-After", $0)] } ?? []))
        case .echoKey(let status)?:
            let key = Query(URLComponents(string: target)?.queryItems ?? [])["apikey"] ?? ""
            write(
                fd,
                Response(
                    status: status,
                    body: Self.errorBody("Invalid API key \(key). Please check the key or contact support")))
        case let rewrite? where rewrite.isRewrite:
            write(fd, route(path: path, target: target, rewrite: rewrite))
        case .endlessBody?:
            endless(fd)
        case .bomb(let encoding)?:
            let file = Self.bombFixtures[encoding].map { fixtures.appendingPathComponent($0) }
            guard let file, let body = try? Data(contentsOf: file) else {
                write(fd, Response(status: 500, body: Self.errorBody("No bomb fixture for \(encoding)")))
                break
            }
            write(fd, Response(status: 200, body: body, headers: [("Content-Encoding", encoding)]))
        case .status(let code, let reason)?:
            write(fd, Response(status: code, body: Self.errorBody(reason ?? Self.defaultReason(code))))
        case .delay(let seconds)?:
            Thread.sleep(forTimeInterval: seconds)
            write(fd, route(path: path, target: target))
        case .truncatedBody?:
            let r = route(path: path, target: target)
            Socket.sendAll(fd, header(r, contentLength: r.body.count))
            Socket.sendAll(fd, r.body.prefix(r.body.count / 2))
        case .reset?:
            return .reset
        case .rateLimit?:
            write(fd, Response(status: 429, body: Self.errorBody(Self.minutelyLimitReason)))
        case .redirect(let location)?:
            write(fd, Response(status: 302, body: Data(), headers: [("Location", location)]))
        case .wrongContentType?:
            let html =
                "<!DOCTYPE html><html><head><title>Login required</title></head><body><h1>Please sign in to use this network</h1></body></html>"
            write(fd, Response(status: 200, contentType: "text/html; charset=utf-8", body: Data(html.utf8)))
        case .trickle(let bps)?:
            let r = route(path: path, target: target)
            guard Socket.sendAll(fd, header(r, contentLength: r.body.count)) else { break }
            // Ten slices per second keeps the rate smooth without a syscall per byte.
            let slice = max(1, bps / 10)
            var offset = 0
            while offset < r.body.count {
                let end = min(r.body.count, offset + slice)
                guard Socket.sendAll(fd, r.body.subdata(in: offset..<end)) else { break }
                let sent = end - offset
                offset = end
                if offset < r.body.count { Thread.sleep(forTimeInterval: Double(sent) / Double(bps)) }
            }
        case .emptyBody?:
            write(fd, Response(status: 200, body: Data()))
        case .notJSON?:
            var r = route(path: path, target: target)
            r.body.append(Data("Unexpected error while streaming data: x".utf8))
            write(fd, r)
        default:
            break  // every kind is handled above; rewrites by `isRewrite`
        }
        return .close
    }

    /// A chunked 200 that opens a JSON array of numbers and never closes it.
    private func endless(_ fd: Int32) {
        var head = "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
        head += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        guard Socket.sendAll(fd, Data(head.utf8)) else { return }
        let payload = Data(("[" + String(repeating: "1.5,", count: 16383)).utf8)
        var chunk = Data((String(payload.count, radix: 16) + "\r\n").utf8)
        chunk.append(payload)
        chunk.append(Data("\r\n".utf8))
        var sent = 0
        // Until the client hangs up (the send fails), with a cap so a client that never does
        // cannot keep a server thread busy forever.
        while sent < Self.endlessBodyCap, Socket.sendAll(fd, chunk) { sent += payload.count }
    }

    private func header(_ r: Response, contentLength: Int, keepAlive: Bool = false) -> Data {
        var h = "HTTP/1.1 \(r.status) \(Self.statusText(r.status))\r\n"
        h += "Content-Type: \(r.contentType)\r\n"
        h += "Content-Length: \(contentLength)\r\n"
        for (k, v) in r.headers { h += "\(k): \(v)\r\n" }
        h += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        return Data(h.utf8)
    }

    private func write(_ fd: Int32, _ r: Response, keepAlive: Bool = false) {
        var all = header(r, contentLength: r.body.count, keepAlive: keepAlive)
        all.append(r.body)
        Socket.sendAll(fd, all)
    }

    static func errorBody(_ reason: String) -> Data {
        Data("{\"error\":true,\"reason\":\(JSONText.quote(reason))}".utf8)
    }

    private static func defaultReason(_ code: Int) -> String {
        switch code {
        case 429: return minutelyLimitReason
        case 500: return "Something went wrong."
        case 503: return "The service is overloaded"
        case 401: return "API key required. Please add &apikey= to the URL."
        case 404: return "Not found"
        default: return "HTTP status \(code)"
        }
    }

    private static func statusText(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 302: return "Found"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status"
        }
    }

    // MARK: Routing

    private func route(path: String, target: String, rewrite: Fault? = nil) -> Response {
        let query = Query(URLComponents(string: target)?.queryItems ?? [])
        switch path {
        case "/v1/forecast":
            return locations(api: .forecast, query: query, rewrite: rewrite)
        case Self.singleRunsPath:
            return singleRun(query: query, rewrite: rewrite)
        case "/v1/archive":
            return locations(api: .archive, query: query, rewrite: rewrite)
        case "/v1/search":
            return search(query)
        case EnsembleReplay.path:
            let answer = EnsembleReplay.answer(query: query, now: now(), dispersion: ensembleDispersion)
            return Response(status: answer.status, body: answer.body)
        default:
            let comps = path.split(separator: "/")
            if comps.count == 4, comps[0] == "data", comps[2] == "static", comps[3] == "meta.json" {
                return meta(model: String(comps[1]))
            }
            if let station = StationArchives.answer(path: path, query: { query[$0] }) {
                return Response(status: station.status, contentType: station.contentType, body: station.body)
            }
            return Response(status: 404, body: Self.errorBody("Not found"))
        }
    }

    /// Forecast and archive share the multi-location rules: one pair → an object, several → an
    /// array whose elements after the first carry `"location_id": i`, as Open-Meteo answers several locations.
    private func locations(api: Synth.API, query q: Query, rewrite: Fault? = nil, singleRun: Int? = nil) -> Response {
        let lats = q.list("latitude").map { Double($0) }
        let lons = q.list("longitude").map { Double($0) }
        guard !lats.isEmpty, !lons.isEmpty else {
            return Response(status: 400, body: Self.errorBody("Parameter 'latitude' and 'longitude' are required"))
        }
        guard lats.count == lons.count else {
            return Response(
                status: 400,
                body: Self.errorBody("Parameter 'latitude' and 'longitude' must have the same number of elements"))
        }
        var coords: [(Double, Double)] = []
        for (la, lo) in zip(lats, lons) {
            guard let la, let lo, (-90...90).contains(la), (-180...180).contains(lo) else {
                return Response(
                    status: 400,
                    body: Self.errorBody(
                        "Latitude must be in range of -90 to 90°. Longitude must be in range of -180 to 180°."))
            }
            coords.append((la, lo))
        }
        let zones = q.list("timezone")
        guard zones.count <= 1 || zones.count == coords.count else {
            return Response(
                status: 400,
                body: Self.errorBody("Parameter 'timezone' must have the same number of elements as latitude"))
        }
        let (clock, registered) = lock.withLock { (_now, forecasts) }
        let context: SynthContext
        if let singleRun {
            // A single run's window starts on its initialisation day, as the live one starts today.
            // Its hours before the initialisation are the live endpoint's: stitched from the earlier runs.
            context = SynthContext(
                now: Date(timeIntervalSince1970: TimeInterval(singleRun)), runInit: { _ in singleRun },
                cadence: { self.model(named: $0).cadence })
        } else {
            let now = clock()
            let seconds = Int(now.timeIntervalSince1970.rounded(.down))
            let schedules = Dictionary(q.list("models").map { ($0, model(named: $0)) }, uniquingKeysWith: { a, _ in a })
            let blend = model(named: "best_match")
            context = SynthContext(
                now: now, runInit: { (schedules[$0] ?? blend).latestRun(at: seconds) },
                cadence: { (schedules[$0] ?? blend).cadence })
        }

        var objects: [Data] = []
        for (i, (la, lo)) in coords.enumerated() {
            // `wrongLocationID`: the content of location i labelled as the next one.
            let id = rewrite == .wrongLocationID ? (i + 1) % coords.count : i
            if api == .forecast, singleRun == nil,
                let hit = registered.last(where: { abs($0.lat - la) <= 0.01 && abs($0.lon - lo) <= 0.01 })
            {
                objects.append(id == 0 ? hit.body : Self.insertLocationID(id, into: hit.body))
                continue
            }
            do {
                let zone = zones.isEmpty ? "GMT" : zones[zones.count == 1 ? 0 : i]
                let text = try Synth.location(
                    api: api, query: q, latitude: la, longitude: lo, index: id, zoneName: zone, context: context)
                objects.append(Data(text.utf8))
            } catch {
                return Response(status: error.status, body: Self.errorBody(error.reason))
            }
        }
        switch rewrite {
        case .swappedOrder?: objects.reverse()
        case .farGridPoint(let latitude, let longitude)?:
            objects[0] = Self.replacingFirst(
                #""latitude":\s*[-0-9.eE+]+"#, with: "\"latitude\":\(latitude)", in: objects[0])
            objects[0] = Self.replacingFirst(
                #""longitude":\s*[-0-9.eE+]+"#, with: "\"longitude\":\(longitude)", in: objects[0])
        case .hugeTimezone(let length)?:
            let name = "Europe/" + String(repeating: "X", count: max(0, length - 7))
            objects = objects.map {
                Self.replacingFirst(#""timezone":\s*"[^"]*""#, with: "\"timezone\":\"\(name)\"", in: $0)
            }
        default: break
        }
        if objects.count == 1 { return Response(status: 200, body: objects[0]) }
        var body = Data("[".utf8)
        for (i, o) in objects.enumerated() {
            if i > 0 { body.append(Data(",".utf8)) }
            body.append(o)
        }
        body.append(Data("]".utf8))
        return Response(status: 200, body: body)
    }

    /// The Single Runs API: the whole of one run (`run=YYYY-MM-DDTHH:MM`, UTC) of every requested
    /// model, from local midnight of the run's day for `forecast_days` (default 16) days, with the
    /// values the live endpoint serves while that run is the latest. A run the archive does not hold
    /// (before its start, off the model's cadence or a full 3 hours) or not yet available at the
    /// server's clock gets a 400 that names it.
    private func singleRun(query q: Query, rewrite: Fault?) -> Response {
        func bad(_ reason: String) -> Response { Response(status: 400, body: Self.errorBody(reason)) }
        guard let text = q["run"], !text.isEmpty else {
            return bad("Parameter 'run' is required (the model run's initialisation time, YYYY-MM-DDTHH:MM in UTC)")
        }
        guard let run = Self.parseTime(text) else {
            return bad("Invalid run '\(text)'. Expected the initialisation time as YYYY-MM-DDTHH:MM in UTC")
        }
        if q["start_date"] != nil || q["end_date"] != nil {
            return bad("Parameter 'run' must not be combined with 'start_date' and 'end_date'")
        }
        let name = Civil.minuteString(run)
        let now = Int(self.now().timeIntervalSince1970.rounded(.down))
        let models = q.list("models").isEmpty ? ["best_match"] : q.list("models")
        for modelName in models {
            let m = model(named: modelName)
            let unavailable = "The requested model run is not available: \(modelName) run \(name)"
            if run < m.archiveStart {
                return bad("\(unavailable) is before the archive's start \(Civil.minuteString(m.archiveStart))")
            }
            if !m.isArchived(run) {
                let step = max(m.cadence, ReplayModel.archiveStep) / 3600
                return bad("\(unavailable) is not archived (runs every \(step) hours from 00 UTC)")
            }
            if run + m.delay > now {
                return bad("\(unavailable) is not available yet (from \(Civil.minuteString(run + m.delay)) UTC)")
            }
        }
        let query = q["forecast_days"] == nil ? q.setting("forecast_days", to: "16") : q
        if case .otherRun(let seconds)? = rewrite {
            return locations(api: .forecast, query: query, singleRun: run + seconds)
        }
        return locations(api: .forecast, query: query, rewrite: rewrite, singleRun: run)
    }

    /// "YYYY-MM-DDTHH:MM" (UTC) → Unix seconds.
    public static func parseTime(_ text: String) -> Int? {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        func digits(_ s: Substring) -> Bool { s.allSatisfy { $0.isASCII && $0.isNumber } }
        guard parts.count == 2, parts[0].count == 10, digits(parts[0].replacingOccurrences(of: "-", with: "")[...]),
            let day = Civil.parseDate(String(parts[0]))
        else { return nil }
        let clock = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 2, clock.allSatisfy({ $0.count == 2 && digits($0) }),
            let h = Int(clock[0]), let m = Int(clock[1]), (0..<24).contains(h), (0..<60).contains(m)
        else { return nil }
        return day * 86400 + h * 3600 + m * 60
    }

    /// Inserts `"location_id":i` right after the `elevation` value (where Open-Meteo writes it),
    /// or after the opening brace if there is no elevation. Works on the raw text so a registered
    /// fixture keeps its exact bytes otherwise.
    static func insertLocationID(_ i: Int, into body: Data) -> Data {
        let text = String(decoding: body, as: UTF8.self)
        let insertion = ",\"location_id\":\(i)"
        if let key = text.range(of: "\"elevation\"") {
            var idx = key.upperBound
            // Skip `:` and whitespace, then the number itself.
            while idx < text.endIndex, text[idx] == ":" || text[idx] == " " || text[idx] == "\n" || text[idx] == "\t" {
                idx = text.index(after: idx)
            }
            while idx < text.endIndex, !",}\n\r \t".contains(text[idx]) { idx = text.index(after: idx) }
            var out = text
            out.insert(contentsOf: insertion, at: idx)
            return Data(out.utf8)
        }
        guard let brace = text.firstIndex(of: "{") else { return body }
        var out = text
        out.insert(contentsOf: "\"location_id\":\(i),", at: text.index(after: brace))
        return Data(out.utf8)
    }

    /// Places the README and the demo look up by name, so the offline tour works as written.
    static let gazetteer:
        [String: (
            name: String, latitude: Double, longitude: Double, elevation: Double, timezone: String,
            country: String, countryCode: String
        )] = [
            "berlin": ("Berlin", 52.52437, 13.41053, 74, "Europe/Berlin", "Germany", "DE"),
            "zurich": ("Zurich", 47.36667, 8.55, 429, "Europe/Zurich", "Switzerland", "CH"),
            "london": ("London", 51.50853, -0.12574, 25, "Europe/London", "United Kingdom", "GB"),
            "new york": ("New York", 40.71427, -74.00597, 10, "America/New_York", "United States", "US")
        ]

    static func geocodingBody(
        _ place: (
            name: String, latitude: Double, longitude: Double, elevation: Double, timezone: String,
            country: String, countryCode: String
        )
    ) -> Data {
        Data(
            ("{\"results\":[{\"id\":1,\"name\":\"\(place.name)\",\"latitude\":\(place.latitude),\"longitude\":\(place.longitude),"
                + "\"elevation\":\(place.elevation),\"feature_code\":\"PPLC\",\"country_code\":\"\(place.countryCode)\","
                + "\"timezone\":\"\(place.timezone)\",\"country\":\"\(place.country)\"}],\"generationtime_ms\":0.5}")
                .utf8)
    }

    /// `body` with the first match of `pattern` replaced by `replacement` (taken literally).
    static func replacingFirst(_ pattern: String, with replacement: String, in body: Data) -> Data {
        let text = String(decoding: body, as: UTF8.self)
        guard let range = text.range(of: pattern, options: .regularExpression) else { return body }
        return Data(text.replacingCharacters(in: range, with: replacement).utf8)
    }

    private func search(_ q: Query) -> Response {
        let name = (q["name"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        guard name.count >= 2 else {
            return Response(status: 400, body: Self.errorBody("Parameter name must be at least 2 characters."))
        }
        if let count = q.int("count"), !(1...100).contains(count) {
            return Response(status: 400, body: Self.errorBody("Parameter count must be between 1 and 100."))
        }
        // "Name, Qualifier" → try the full string first, then the name part.
        let plain = name.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? name
        var body = lock.withLock { geocoding[name] ?? geocoding[plain] }
        if body == nil, plain == "hollywood" {
            body = try? Data(
                contentsOf: fixtures.appendingPathComponent("geocoding-search-hollywood-default-count.json"))
        }
        if body == nil { body = Self.gazetteer[plain].map(Self.geocodingBody) }
        guard var result = body else {
            return Response(status: 200, body: Data("{\"generationtime_ms\":0.5}".utf8))
        }
        // Honour count and countryCode on the registered list; re-serialize only if it changed,
        // so an untouched body stays byte-identical to the fixture.
        let count = q.int("count") ?? 10
        let country = q["countryCode"]?.uppercased()
        if let obj = try? JSONSerialization.jsonObject(with: result) as? [String: Any],
            let list = obj["results"] as? [[String: Any]]
        {
            var kept = list
            if let country, !country.isEmpty {
                kept = kept.filter { ($0["country_code"] as? String)?.uppercased() == country }
            }
            if kept.count > count { kept = Array(kept.prefix(count)) }
            if kept.count != list.count {
                var copy = obj
                if kept.isEmpty { copy.removeValue(forKey: "results") } else { copy["results"] = kept }
                result = (try? JSONSerialization.data(withJSONObject: copy)) ?? result
            }
        }
        return Response(status: 200, body: result)
    }

    /// `/data/<domain>/static/meta.json`: a registered initialisation time wins; a domain in
    /// `ReplayModels` otherwise describes its latest run at the server's clock, the run the live
    /// endpoint serves; other domains are 404.
    private func meta(model domain: String) -> Response {
        let (registered, interval, clock) = lock.withLock { (metas[domain], _runInterval, _now) }
        let known = ReplayModels.domains[domain]
        let json: String
        if let initTime = registered {
            // A registered time keeps its old, plausible pattern: written ~2 h after init,
            // available a few minutes later.
            json = """
                {"last_run_initialisation_time":\(initTime),"last_run_modification_time":\(initTime + 7200),\
                "last_run_availability_time":\(initTime + 7500),"temporal_resolution_seconds":3600,\
                "update_interval_seconds":\(known?.cadence ?? interval),"data_end_time":\(initTime + 16 * 86400)}
                """
        } else if let known {
            let initTime = known.latestRun(at: Int(clock().timeIntervalSince1970.rounded(.down)))
            // Written a few minutes before it is announced, as Open-Meteo's servers do.
            json = """
                {"last_run_initialisation_time":\(initTime),"last_run_modification_time":\(initTime + known.delay - 300),\
                "last_run_availability_time":\(initTime + known.delay),"temporal_resolution_seconds":3600,\
                "update_interval_seconds":\(known.cadence),"data_end_time":\(initTime + 16 * 86400)}
                """
        } else {
            return Response(status: 404, body: Self.errorBody("Not found"))
        }
        return Response(status: 200, body: Data(json.utf8))
    }

    // MARK: Control API (for the `wxdb-replay` process)

    private func control(path: String, target: String) -> Response {
        let q = Query(URLComponents(string: target)?.queryItems ?? [])
        func ok(_ extra: String = "") -> Response { Response(status: 200, body: Data("{\"ok\":true\(extra)}".utf8)) }
        func bad(_ reason: String) -> Response { Response(status: 400, body: Self.errorBody(reason)) }
        switch path {
        case "/_control/fault":
            let faultPath = q["path"] ?? "/v1/forecast"
            let times = q.int("times") ?? 1
            let fault: Fault
            switch q["kind"] ?? "" {
            case "status":
                guard let code = q.int("code") else { return bad("status needs code=") }
                fault = .status(code, reason: q["reason"])
            case "delay":
                guard let s = q["seconds"].flatMap(Double.init) else { return bad("delay needs seconds=") }
                fault = .delay(seconds: s)
            case "truncated": fault = .truncatedBody
            case "reset": fault = .reset
            case "ratelimit": fault = .rateLimit
            case "redirect":
                guard let to = q["to"] else { return bad("redirect needs to=") }
                fault = .redirect(to: to)
            case "wrongtype": fault = .wrongContentType
            case "trickle":
                guard let bps = q.int("bps"), bps > 0 else { return bad("trickle needs bps=") }
                fault = .trickle(bytesPerSecond: bps)
            case "empty": fault = .emptyBody
            case "notjson": fault = .notJSON
            case "toomany":
                let reasons = [
                    "minutely": Self.minutelyLimitReason, "hourly": Self.hourlyLimitReason,
                    "daily": Self.dailyLimitReason
                ]
                let reason = q["reason"].map { reasons[$0] ?? $0 } ?? Self.minutelyLimitReason
                fault = .tooManyRequests(reason: reason, retryAfter: q["retry_after"])
            case "echokey": fault = .echoKey(status: q.int("code") ?? 400)
            case "swapped": fault = .swappedOrder
            case "wrongid": fault = .wrongLocationID
            case "fargrid":
                fault = .farGridPoint(
                    latitude: q["lat"].flatMap(Double.init) ?? 27.0, longitude: q["lon"].flatMap(Double.init) ?? -81.0)
            case "hugetz": fault = .hugeTimezone(length: q.int("length") ?? 60_007)
            case "endless": fault = .endlessBody
            case "bomb":
                guard let encoding = q["encoding"], Self.bombFixtures[encoding] != nil else {
                    return bad("bomb needs encoding=gzip, br or zstd")
                }
                fault = .bomb(encoding: encoding)
            default:
                return bad(
                    "Unknown kind. Use status, delay, truncated, reset, ratelimit, toomany, echokey, redirect, wrongtype, trickle, empty, notjson, swapped, wrongid, fargrid, hugetz, endless, bomb"
                )
            }
            enqueue(fault, times: times, path: faultPath)
            return ok()
        case "/_control/requests":
            let list = requests.map { JSONText.quote($0) }.joined(separator: ",")
            return Response(status: 200, body: Data("[\(list)]".utf8))
        case "/_control/reset":
            resetFaults()
            return ok()
        case "/_control/meta":
            guard let model = q["model"], let t = q.int("init") else { return bad("meta needs model= and init=") }
            registerMeta(model: model, lastRunInitialisationTime: t)
            return ok()
        case "/_control/stats":
            // Requests per path, e.g. {"/single-runs/v1/forecast":3,"/v1/forecast":1}.
            var counts: [String: Int] = [:]
            for target in requests {
                counts[String(target.split(separator: "?", maxSplits: 1).first ?? ""), default: 0] += 1
            }
            let fields = counts.keys.sorted().map { "\(JSONText.quote($0)):\(counts[$0]!)" }
            return Response(status: 200, body: Data("{\(fields.joined(separator: ","))}".utf8))
        case "/_control/now":
            // t=UNIX-SECONDS or t=YYYY-MM-DDTHH:MM (UTC) fixes the clock; t=real lets it run again.
            if let t = q["t"] {
                if t == "real" {
                    now = { Date() }
                } else if let seconds = Int(t) ?? Self.parseTime(t.hasSuffix("Z") ? String(t.dropLast()) : t) {
                    let fixed = Date(timeIntervalSince1970: TimeInterval(seconds))
                    now = { fixed }
                } else {
                    return bad("now needs t=UNIX-SECONDS, t=YYYY-MM-DDTHH:MM (UTC) or t=real")
                }
            }
            return ok(",\"now\":\(Int(now().timeIntervalSince1970.rounded(.down)))")
        case "/_control/ensemble":
            guard let d = q["dispersion"].flatMap(Double.init), d >= 0 else {
                return bad("ensemble needs dispersion= (1 calibrated, below 1 under-dispersive)")
            }
            ensembleDispersion = d
            return ok()
        case "/_control/run-interval":
            guard let s = q.int("seconds"), s > 0 else { return bad("run-interval needs seconds=") }
            runIntervalSeconds = s
            return ok()
        default:
            return Response(status: 404, body: Self.errorBody("Not found"))
        }
    }
}

extension ReplayServer.Fault {
    /// Faults that serve the normal answer with its content changed.
    var isRewrite: Bool {
        switch self {
        case .swappedOrder, .wrongLocationID, .farGridPoint, .hugeTimezone, .otherRun: return true
        default: return false
        }
    }
}
