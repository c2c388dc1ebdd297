// The local replay server used by tests and the offline demo. It speaks just enough HTTP/1.1
// (persistent connections for plain answers, `Connection: close` after a fault) to stand in for
// the Open-Meteo hosts, and can inject the failures a real network produces so the fetcher's
// retry logic is exercised against real sockets rather than mocks. This file holds its state and
// configuration; the rest is by job: ReplayConnections (accept loop, one request at a time),
// ReplayHTTP (framing), ReplayFaults, ReplayRoutes, ReplayGeocoding, ReplayControl, Synth (bodies).
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
    let fixtures: URL
    let lock = NSLock()
    var listenFD: Int32 = -1
    var boundPort = 0
    var acceptDone: DispatchSemaphore?
    /// Connections open now, so `stop()` can end those idling between requests.
    var clients: Set<Int32> = []

    // Guarded by `lock`.
    var faults: [String: [Fault]] = [:]
    var log: [String] = []
    var forecasts: [(lat: Double, lon: Double, body: Data)] = []
    var geocoding: [String: Data] = [:]
    var metas: [String: Int] = [:]
    var _runInterval = 3 * 3600
    private var _ensembleDispersion = 1.0
    var _now: @Sendable () -> Date = { Date() }

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
    func nextFault(for path: String) -> Fault? {
        lock.withLock {
            let keys = faults.keys.filter { path.hasPrefix($0) && !(faults[$0]?.isEmpty ?? true) }
            guard let key = keys.max(by: { $0.count < $1.count }) else { return nil }
            return faults[key]!.removeFirst()
        }
    }
}
