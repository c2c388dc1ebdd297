// The replay server's Single Runs API and model metadata: which runs it has, the 400s for those
// it has not, and content that agrees with the live endpoint, so that wxdb stores a run fetched
// live and the same run fetched from the archive as one run.
import Foundation
import Testing
import WxCore
import WxFetcher
import WxReplay
import WxSQLite

@testable import WxStore
@testable import WxStoreSQLite

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// "YYYY-MM-DDTHH:MM" (UTC) of Unix seconds, as `run=` spells it.
private func runText(_ seconds: Int) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
    return String(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))).prefix(16))
}

@Suite("Replay: Single Runs API and meta.json")
struct SingleRunsTests {
    private static let path = ReplayServer.singleRunsPath
    private static let berlin = "latitude=52.52&longitude=13.41"
    private static let variables = "&hourly=temperature_2m,precipitation,wind_speed_10m&daily=temperature_2m_max"

    private func get(_ server: ReplayServer, _ pathAndQuery: String) async -> (Int, Data) {
        let (result, _) = await Support.fetch(Support.client(attempts: 1), Support.url(server, pathAndQuery))
        switch result {
        case .success(let response): return (response.status, response.body)
        case .failure(.http(let status, let reason)): return (status, Data((reason ?? "").utf8))
        case .failure(let error): return (-1, Data("\(error)".utf8))
        }
    }

    /// (run, models, what the 400's reason must contain); the clock is 2026-07-26T12:00Z.
    static let refusals: [(String?, String, String)] = [
        (nil, "gfs_seamless", "Parameter 'run' is required"),
        ("", "gfs_seamless", "Parameter 'run' is required"),
        ("2026-07-26", "gfs_seamless", "Invalid run '2026-07-26'"),
        ("2026-07-26T24:00", "gfs_seamless", "Invalid run '2026-07-26T24:00'"),
        ("2026-07-26T06:00:00", "gfs_seamless", "Invalid run"),
        ("2026-07-26T+6:00", "gfs_seamless", "Invalid run"),
        ("2026-7-26T06:00", "gfs_seamless", "Invalid run"),
        // Off the model's 6-hour cadence.
        ("2026-07-26T03:00", "gfs_seamless", "gfs_seamless run 2026-07-26T03:00 is not archived"),
        ("2026-07-26T06:30", "ecmwf_ifs025", "ecmwf_ifs025 run 2026-07-26T06:30 is not archived"),
        // An hourly model's side runs are not kept: only every full 3 hours.
        ("2026-07-26T01:00", "metno_nordic", "metno_nordic run 2026-07-26T01:00 is not archived"),
        // Before the archive's start (2 April 2026; IFS HRES from March 2024).
        ("2026-04-01T18:00", "gfs_seamless", "gfs_seamless run 2026-04-01T18:00 is before the archive's start"),
        ("2024-02-29T18:00", "ecmwf_ifs", "ecmwf_ifs run 2024-02-29T18:00 is before the archive's start"),
        ("2026-04-01T21:00", "best_match", "best_match run 2026-04-01T21:00 is before the archive's start"),
        // Not available yet: GFS 12 UTC comes 5 h later, ECMWF 06 UTC at 12:00 is fine but 12 UTC is not.
        ("2026-07-26T12:00", "gfs_seamless", "gfs_seamless run 2026-07-26T12:00 is not available yet"),
        ("2026-07-26T12:00", "ecmwf_ifs025,gfs_seamless", "ecmwf_ifs025 run 2026-07-26T12:00 is not available yet"),
        // icon_d2 has its 09 UTC run (2 h delay), ICON global not (6-hourly).
        ("2026-07-26T09:00", "icon_d2,icon_seamless", "icon_seamless run 2026-07-26T09:00 is not archived"),
        ("2026-07-27T00:00", "best_match", "best_match run 2026-07-27T00:00 is not available yet")
    ]

    @Test(
        "a run missing, malformed, not archived or not yet available is a 400 whose reason names it",
        arguments: refusals)
    func refused(run: String?, models: String, reason: String) async throws {
        let server = try Support.server()
        defer { server.stop() }
        let runPart = run.map { "&run=\($0)" } ?? ""
        let (status, body) = await get(
            server, Self.path + "?" + Self.berlin + Self.variables + "&models=\(models)" + runPart)
        #expect(status == 400)
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains(reason), "\(text)")
    }

    @Test("the raw 400 body has Open-Meteo's shape")
    func errorBody() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let url = Support.url(server, Self.path + "?" + Self.berlin + "&models=gfs_seamless&run=2026-03-01T00:00")
        let (body, response) = try await URLSession.shared.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 400)
        #expect(
            (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")
                == "application/json; charset=utf-8")
        let object = try #require(try Support.json(body) as? [String: Any])
        #expect(object["error"] as? Bool == true)
        #expect((object["reason"] as? String)?.contains("2026-03-01T00:00") == true)
        #expect(Set(object.keys) == ["error", "reason"])
    }

    @Test("start_date/end_date cannot be combined with run")
    func noDateRange() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let (status, body) = await get(
            server, Self.path + "?" + Self.berlin + "&run=2026-07-26T06:00&start_date=2026-07-26&end_date=2026-07-27")
        #expect(status == 400 && String(decoding: body, as: UTF8.self).contains("must not be combined"))
    }

    @Test("the whole run: 16 days from local midnight of the run's day by default, forecast_days honoured")
    func window() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let base = Self.path + "?" + Self.berlin + Self.variables + "&models=ecmwf_ifs&timezone=Europe/Berlin"
        let (status, body) = await get(server, base + "&run=2024-03-01T00:00&timeformat=unixtime")
        #expect(status == 200)
        let o = try #require(try Support.json(body) as? [String: Any])
        let times = try #require((o["hourly"] as? [String: Any])?["time"] as? [Int])
        #expect(times.count == 16 * 24)
        // Local midnight (CET, +1 h) of 2024-03-01.
        #expect(times.first == 1_709_247_600)
        let (_, three) = await get(server, base + "&run=2026-07-20T18:00&forecast_days=3")
        let o3 = try #require(try Support.json(three) as? [String: Any])
        let isoTimes = try #require((o3["hourly"] as? [String: Any])?["time"] as? [String])
        #expect(isoTimes.count == 72 && isoTimes.first == "2026-07-20T00:00" && isoTimes.last == "2026-07-22T23:00")
    }

    @Test("several locations: an array in request order with location_id, as the live endpoint answers")
    func multiLocation() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let (status, body) = await get(
            server,
            Self.path + "?latitude=52.52,48.14,40.71&longitude=13.41,11.58,-74.01" + Self.variables
                + "&models=gfs_seamless,icon_seamless&timezone=Europe/Berlin,Europe/Berlin,America/New_York"
                + "&run=2026-07-26T00:00")
        #expect(status == 200)
        let list = try #require(try Support.json(body) as? [[String: Any]])
        #expect(list.count == 3)
        #expect(
            list[0]["location_id"] == nil && list[1]["location_id"] as? Int == 1 && list[2]["location_id"] as? Int == 2)
        #expect(list[2]["utc_offset_seconds"] as? Int == -4 * 3600)
        let temps = list.map { ($0["hourly"] as? [String: Any])?["temperature_2m_gfs_seamless"] as? [Double] }
        #expect(temps.allSatisfy { $0?.count == 384 })
        #expect(temps[0] != temps[1])
    }

    /// Models with different cadences and delays, and the run the live endpoint serves at
    /// 2026-07-26T12:00Z.
    static let liveModels: [(String, String)] = [
        ("gfs_seamless", "2026-07-26T06:00"), ("icon_seamless", "2026-07-26T06:00"),
        ("ecmwf_ifs025", "2026-07-26T06:00"), ("gfs_seamless,icon_seamless,ecmwf_ifs025", "2026-07-26T06:00"),
        ("icon_d2", "2026-07-26T09:00"), ("jma_msm", "2026-07-26T09:00"), ("best_match", "2026-07-26T12:00")
    ]

    @Test("the live endpoint serves each model's latest run with the single run's exact bytes", arguments: liveModels)
    func liveAgrees(models: String, run: String) async throws {
        let server = try Support.server()
        defer { server.stop() }
        let names = models.split(separator: ",").map(String.init)
        #expect(names.allSatisfy { runText(server.latestRun(model: $0)) == run })
        let query =
            "?latitude=52.52,47.37&longitude=13.41,8.55" + Self.variables
            + "&daily=temperature_2m_max,precipitation_sum,sunrise&models=\(models)&timezone=Europe/Berlin"
            + "&forecast_days=16&timeformat=unixtime"
        let (liveStatus, live) = await get(server, "/v1/forecast" + query)
        let (singleStatus, single) = await get(server, Self.path + query + "&run=\(run)")
        #expect(liveStatus == 200 && singleStatus == 200)
        #expect(live == single)

        // The run before differs: a new run is new content.
        let earlier = server.latestRun(model: names[0]) - server.model(named: names[0]).cadence
        let (previousStatus, previous) = await get(server, Self.path + query + "&run=\(runText(earlier))")
        #expect(previousStatus == 200 && previous != single)
    }

    @Test("live and single-run windows differ (past_days, forecast_days), the shared hours do not")
    func sharedHoursAgree() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let q = "?" + Self.berlin + "&hourly=temperature_2m,precipitation&models=ecmwf_ifs025&timeformat=unixtime"
        let (_, live) = await get(server, "/v1/forecast" + q + "&past_days=2&forecast_days=5")
        let (_, single) = await get(server, Self.path + q + "&run=2026-07-26T06:00")
        func series(_ body: Data) throws -> [Int: [Double]] {
            let hourly = try #require((try Support.json(body) as? [String: Any])?["hourly"] as? [String: Any])
            let times = try #require(hourly["time"] as? [Int])
            let t = try #require(hourly["temperature_2m"] as? [Double])
            let p = try #require(hourly["precipitation"] as? [Double])
            return Dictionary(uniqueKeysWithValues: times.indices.map { (times[$0], [t[$0], p[$0]]) })
        }
        let a = try series(live)
        let b = try series(single)
        let shared = Set(a.keys).intersection(b.keys)
        #expect(shared.count == 5 * 24)
        #expect(shared.allSatisfy { a[$0] == b[$0] })
    }

    @Test("the same request gives the same bytes from a restarted server")
    func deterministic() async throws {
        let q = Self.path + "?" + Self.berlin + Self.variables + "&models=gfs_seamless,ecmwf_ifs&run=2026-05-10T18:00"
        let first = try Support.server()
        let (s1, a) = await get(first, q)
        first.stop()
        let second = try Support.server()
        defer { second.stop() }
        // A later clock changes nothing about a past run.
        second.now = { Support.fixedNow.addingTimeInterval(30 * 86400) }
        let (s2, b) = await get(second, q)
        #expect(s1 == 200 && s2 == 200 && a == b)
    }

    @Test("meta.json of every known domain: the documented fields, the live endpoint's run, its cadence")
    func meta() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let now = Int(Support.fixedNow.timeIntervalSince1970)
        for (domain, model) in ReplayModels.domains.sorted(by: { $0.key < $1.key }) {
            let (status, body) = await get(server, "/data/\(domain)/static/meta.json")
            #expect(status == 200)
            let o = try #require(try Support.json(body) as? [String: Any])
            #expect(
                Set(o.keys) == [
                    "last_run_initialisation_time", "last_run_modification_time", "last_run_availability_time",
                    "temporal_resolution_seconds", "update_interval_seconds", "data_end_time"
                ])
            let initTime = try #require(o["last_run_initialisation_time"] as? Int)
            let available = try #require(o["last_run_availability_time"] as? Int)
            #expect(o["update_interval_seconds"] as? Int == model.cadence)
            #expect(initTime % model.cadence == 0 && available <= now && available + model.cadence > now, "\(domain)")
            #expect((o["last_run_modification_time"] as? Int ?? .max) <= available)
            // What the live endpoint serves for every models= name of the domain.
            for (name, d) in ReplayModels.names where d == domain {
                #expect(server.latestRun(model: name) == initTime, "\(name)")
            }
        }
        #expect(ReplayModels.domains["ecmwf_ifs025"]?.cadence == 6 * 3600)
        #expect(ReplayModels.domains["dwd_icon_d2"]?.cadence == 3 * 3600)
        #expect(ReplayModels.domains["ecmwf_ifs"]?.archiveStart == 1_709_251_200)  // 2024-03-01
        #expect(ReplayModels.domains["ncep_gfs013"]?.archiveStart == 1_775_088_000)  // 2026-04-02
    }

    @Test("the replay knows every model wxdb reads meta.json for, under the same domain")
    func sameDomainsAsFetcher() {
        #expect(ReplayModels.names == ModelDomains.domains)
        #expect(Set(ReplayModels.names.values).isSubset(of: Set(ReplayModels.domains.keys)))
    }

    @Test("faults on the single-runs path, counted apart from /v1/forecast; /_control/now and /_control/stats")
    func faultsAndCounts() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let control = Support.client(attempts: 1)
        let q = Self.path + "?" + Self.berlin + Self.variables + "&models=gfs_seamless&run=2026-07-26T06:00"
        server.enqueue(.status(503, reason: nil), path: Self.path)
        server.enqueue(.status(500, reason: "b"), path: Self.path)
        let (result, attempts) = await Support.fetch(Support.client(attempts: 3), Support.url(server, q))
        #expect(result.success?.status == 200)
        #expect(attempts.count == 3)
        #expect(attempts.first?.error == .http(status: 503, reason: "The service is overloaded"))
        // A fault for the live path leaves the single-runs path alone.
        server.enqueue(.reset, path: "/v1/forecast")
        #expect(await get(server, q).0 == 200)
        _ = await get(server, "/v1/forecast?" + Self.berlin)
        #expect(server.requestCount(path: Self.path) == 4)
        #expect(server.requestCount(path: "/v1/forecast") == 1)
        let stats = try #require(
            try Support.json(try await control.get(Support.url(server, "/_control/stats")).body) as? [String: Int])
        #expect(stats == [Self.path: 4, "/v1/forecast": 1])

        // The clock moves on: the 12 UTC run becomes available at 17:00.
        let later = Self.path + "?" + Self.berlin + "&models=gfs_seamless&run=2026-07-26T12:00"
        #expect(await get(server, later).0 == 400)
        _ = try await control.get(Support.url(server, "/_control/now?t=2026-07-26T17:00"))
        #expect(await get(server, later).0 == 200)
        _ = try await control.get(Support.url(server, "/_control/now?t=1785067200"))
        #expect(server.now() == Support.fixedNow)
        let refused = await get(server, "/_control/now?t=yesterday")
        #expect(refused.0 == 400)
    }
}

/// A backfilled run and a live fetch of the same run, stored through the real Store and Ingestor.
@Suite("Replay: a live and a backfilled fetch of one run are one run", .serialized)
struct SingleRunDedupTests {
    static let models = ["gfs_seamless", "ecmwf_ifs025"]

    /// Fetches `run` of every model from the single-runs endpoint with ingest's own query (but
    /// the run's full window) and stores it as a backfill would: issued at the run's time.
    static func backfill(_ server: ReplayServer, _ store: SQLiteStore, _ location: Location, run: Int) async throws
        -> [StoreOutcome]
    {
        let request = ForecastRequest(locations: [location], models: models, forecastDays: 16, pastDays: 0)
        let query = request.query.filter { $0.0 != "past_days" } + [("run", runText(run))]
        let url = try HostileIngestTests.endpoints(server).url(server.baseURL + ReplayServer.singleRunsPath, query)
        let response = try await Support.client(attempts: 1).get(url)
        let decoded = try ForecastDecoder.decodeMany(response.body, defaultModel: models[0], models: models)
        let fetch = FetchRecord(
            fetchedAt: Int64(Support.fixedNow.timeIntervalSince1970), origin: .fetch, request: url.absoluteString,
            issuedAt: Dictionary(uniqueKeysWithValues: models.map { ($0, Int64(run)) }), recordAnalysis: false)
        return try store.store(try #require(decoded.first), for: location, fetch: fetch)
    }

    @Test(
        "backfill then live ingest, or live ingest then backfill: one run per model, issued at the run",
        arguments: [true, false])
    func oneRun(backfillFirst: Bool) async throws {
        let server = try Support.server()
        defer { server.stop() }
        let (store, folder) = try HostileIngestTests.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let here = try store.addLocation(
            name: "Here", latitude: 52.52, longitude: 13.41, elevation: nil, timezone: "Europe/Berlin",
            models: Self.models, now: 0)
        let run = server.latestRun(model: "gfs_seamless")
        #expect(run == server.latestRun(model: "ecmwf_ifs025"))
        let ingestor = Ingestor(
            store: store, client: Support.client(), endpoints: HostileIngestTests.endpoints(server),
            now: { Support.fixedNow })

        if backfillFirst {
            #expect(try await Self.backfill(server, store, here, run: run).map(\.kind) == [.stored, .stored])
            let summary = await ingestor.run([here], options: IngestOptions())
            #expect(summary.failed.isEmpty, "\(summary.line)")
            #expect(summary.stored == 0 && summary.repeated == 2, "\(summary.line)")
        } else {
            let summary = await ingestor.run([here], options: IngestOptions())
            #expect(summary.stored == 2, "\(summary.line)")
            let outcomes = try await Self.backfill(server, store, here, run: run)
            #expect(outcomes.map(\.kind) == [.repeated, .repeated])
        }
        #expect(try store.db.scalarInt("SELECT count(*) FROM forecast_runs") == 2)
        #expect(try store.db.scalarInt("SELECT count(*) FROM forecast_runs WHERE issued_at = \(run)") == 2)
        #expect(try store.db.scalarInt("SELECT count(*) FROM forecast_runs WHERE issued_at_source = 'model_run'") == 2)

        // The run before is another run.
        let earlier = try await Self.backfill(server, store, here, run: run - 6 * 3600)
        #expect(earlier.map(\.kind) == [.stored, .stored])
        #expect(try store.db.scalarInt("SELECT count(*) FROM forecast_runs") == 4)
    }
}
