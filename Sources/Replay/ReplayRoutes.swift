// The replay server's routes: forecast, archive and Single Runs (multi-location answers and their
// rewrites), meta.json, and the station archives.
// Foundation: URLComponents, Data and regular expressions, like the rest of the test server (not in wxdb).
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ReplayServer {
    // MARK: Routing

    /// The normal answer to a request for `path`; `rewrite` alters its content (a rewrite fault).
    func route(path: String, target: String, rewrite: Fault? = nil) -> Response {
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
    func locations(api: Synth.API, query q: Query, rewrite: Fault? = nil, singleRun: Int? = nil) -> Response {
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
    func singleRun(query q: Query, rewrite: Fault?) -> Response {
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

    /// `body` with the first match of `pattern` replaced by `replacement` (taken literally).
    static func replacingFirst(_ pattern: String, with replacement: String, in body: Data) -> Data {
        let text = String(decoding: body, as: UTF8.self)
        guard let range = text.range(of: pattern, options: .regularExpression) else { return body }
        return Data(text.replacingCharacters(in: range, with: replacement).utf8)
    }

    /// `/data/<domain>/static/meta.json`: a registered initialisation time wins; a domain in
    /// `ReplayModels` otherwise describes its latest run at the server's clock, the run the live
    /// endpoint serves; other domains are 404.
    func meta(model domain: String) -> Response {
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
        } else if let name = EnsembleReplay.domains[domain], let ensemble = EnsembleReplay.models[name],
            let initTime = EnsembleReplay.latestRun(model: name, at: Int(clock().timeIntervalSince1970.rounded(.down)))
        {
            // An ensemble domain: the run `/v1/ensemble` serves now.
            json = """
                {"last_run_initialisation_time":\(initTime),"last_run_modification_time":\(initTime + ensemble.delay - 300),\
                "last_run_availability_time":\(initTime + ensemble.delay),"temporal_resolution_seconds":3600,\
                "update_interval_seconds":\(ensemble.cadence),"data_end_time":\(initTime + ensemble.horizon)}
                """
        } else {
            return Response(status: 404, body: Self.errorBody("Not found"))
        }
        return Response(status: 200, body: Data(json.utf8))
    }
}
