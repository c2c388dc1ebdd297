// The replay server's own behaviour: synthesized forecasts and archive data, geocoding,
// meta.json, fault queues per path and the control API used by the `wxdb-replay` process.
import Foundation
import Testing
import WxFetcher
import WxReplay

#if canImport(Glibc)
    import Glibc
#endif

@Suite("ReplayServer")
struct ReplayServerTests {
    private func body(_ server: ReplayServer, _ pathAndQuery: String) async throws -> Data {
        try await Support.client(attempts: 1).get(Support.url(server, pathAndQuery)).body
    }

    private func object(_ server: ReplayServer, _ pathAndQuery: String) async throws -> [String: Any] {
        try #require(try Support.json(try await body(server, pathAndQuery)) as? [String: Any])
    }

    private let fullQuery =
        "/v1/forecast?latitude=52.52&longitude=13.41"
        + "&hourly=temperature_2m,relative_humidity_2m,precipitation,weather_code,wind_direction_10m,pressure_msl,is_day"
        + "&daily=weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max,wind_speed_10m_max,sunrise,sunset"
        + "&current=temperature_2m,weather_code"

    @Test("synthesized forecast: header keys, equal array lengths, realistic ranges")
    func synthesizedShape() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let o = try await object(server, fullQuery + "&past_days=1&forecast_days=3&timezone=Europe/Berlin")

        for key in [
            "latitude", "longitude", "generationtime_ms", "utc_offset_seconds", "timezone", "timezone_abbreviation",
            "elevation",
            "current_units", "current", "hourly_units", "hourly", "daily_units", "daily"
        ] {
            #expect(o[key] != nil, "missing \(key)")
        }
        #expect(o["location_id"] == nil)
        let hourly = try #require(o["hourly"] as? [String: [Any]])
        let daily = try #require(o["daily"] as? [String: [Any]])
        #expect(hourly.count == 8 && daily.count == 9)
        #expect(Set(hourly.values.map(\.count)) == [96])
        #expect(Set(daily.values.map(\.count)) == [4])

        // Europe/Berlin at the fixed clock (July) is +2 h: the series starts at local midnight
        // of yesterday (past_days=1).
        #expect(o["utc_offset_seconds"] as? Int == 7200)
        #expect(o["timezone_abbreviation"] as? String == "GMT+2")
        #expect((hourly["time"]?.first as? String) == "2026-07-25T00:00")
        #expect((daily["time"]?.first as? String) == "2026-07-25")
        #expect((daily["sunrise"]?.first as? String)?.hasPrefix("2026-07-25T0") == true)

        let temps = try #require(hourly["temperature_2m"] as? [Double])
        #expect(temps.allSatisfy { (-5...30).contains($0) })
        let humidity = try #require(hourly["relative_humidity_2m"] as? [Int])
        #expect(humidity.allSatisfy { (0...100).contains($0) })
        let precipitation = try #require(hourly["precipitation"] as? [Double])
        #expect(precipitation.allSatisfy { $0 >= 0 })
        let codes = try #require(hourly["weather_code"] as? [Int])
        let wmo: Set<Int> = [
            0, 1, 2, 3, 45, 48, 51, 53, 55, 56, 57, 61, 63, 65, 66, 67, 71, 73, 75, 77, 80, 81, 82, 85, 86, 95, 96, 99
        ]
        #expect(codes.allSatisfy { wmo.contains($0) })
        let directions = try #require(hourly["wind_direction_10m"] as? [Int])
        #expect(directions.allSatisfy { (0...359).contains($0) })
        let pressure = try #require(hourly["pressure_msl"] as? [Double])
        #expect(pressure.allSatisfy { (980...1045).contains($0) })
        // Daily max/min are aggregates of the hourly series of the same day.
        let maxima = try #require(daily["temperature_2m_max"] as? [Double])
        #expect(maxima[0] == temps[0..<24].max())

        // Fixed decimals as Open-Meteo prints them.
        let text = String(decoding: try await body(server, fullQuery), as: UTF8.self)
        #expect(
            text.contains("\"precipitation\":[")
                && text.range(of: #"\"precipitation\":\[-?\d+\.\d\d[,\]]"#, options: .regularExpression) != nil)
    }

    @Test("two models suffix hourly and daily keys, current stays unsuffixed")
    func modelSuffixes() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let o = try await object(server, fullQuery + "&models=best_match,gfs_seamless")
        let hourly = try #require(o["hourly"] as? [String: [Any]])
        let daily = try #require(o["daily"] as? [String: [Any]])
        let current = try #require(o["current"] as? [String: Any])
        #expect(hourly["temperature_2m_best_match"] != nil && hourly["temperature_2m_gfs_seamless"] != nil)
        #expect(hourly["temperature_2m"] == nil)
        #expect(daily["sunrise_gfs_seamless"] != nil && daily["weather_code_best_match"] != nil)
        #expect(current["temperature_2m"] != nil && current["temperature_2m_best_match"] == nil)
        #expect((o["hourly_units"] as? [String: String])?["temperature_2m_gfs_seamless"] == "°C")
        // The models disagree somewhere, like real models do.
        #expect(
            (hourly["temperature_2m_best_match"] as? [Double]) != (hourly["temperature_2m_gfs_seamless"] as? [Double]))

        let single = try await object(server, fullQuery + "&models=icon_seamless")
        #expect((single["hourly"] as? [String: Any])?["temperature_2m"] != nil)
    }

    @Test(
        "unixtime: hourly steps of 3600 s from local midnight, daily at local midnights",
        arguments: ["GMT", "Europe/Berlin", "%2B05:30"])
    func unixtime(timezone: String) async throws {
        let server = try Support.server()
        defer { server.stop() }
        let o = try await object(server, fullQuery + "&timeformat=unixtime&timezone=\(timezone)")
        let offset = try #require(o["utc_offset_seconds"] as? Int)
        let times = try #require((o["hourly"] as? [String: Any])?["time"] as? [Int])
        #expect(times.count == 168)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 3600 })
        #expect((times[0] + offset) % 86400 == 0)
        let days = try #require((o["daily"] as? [String: Any])?["time"] as? [Int])
        #expect(days.count == 7 && days[0] == times[0])
        #expect(zip(days, days.dropFirst()).allSatisfy { $1 - $0 == 86400 })
        let sunrise = try #require((o["daily"] as? [String: Any])?["sunrise"] as? [Int])
        #expect(zip(sunrise, days).allSatisfy { $0 > $1 && $0 < $1 + 86400 })
        #expect((o["hourly_units"] as? [String: String])?["time"] == "unixtime")
    }

    @Test("same run → identical body; next run → different body")
    func runs() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.runIntervalSeconds = 3600
        let start = Date(timeIntervalSince1970: 1_785_067_200)  // on a run boundary
        server.now = { start }
        let a = try await body(server, fullQuery)
        server.now = { start.addingTimeInterval(60) }  // same run, same 15-min current slot
        let b = try await body(server, fullQuery)
        #expect(a == b)
        server.now = { start.addingTimeInterval(3600) }  // next run, same day
        let c = try await body(server, fullQuery + "")
        #expect(a != c)
        // Same times, different values: only the content changed, not the shape.
        let ha = try #require(try Support.json(a) as? [String: Any])["hourly"] as? [String: [Any]]
        let hc = try #require(try Support.json(c) as? [String: Any])["hourly"] as? [String: [Any]]
        #expect((ha?["time"] as? [String]) == (hc?["time"] as? [String]))
        #expect(server.currentRun == Int(start.timeIntervalSince1970) / 3600 + 1)
    }

    @Test("a live forecast's hours before its run are the earlier runs' (as Open-Meteo stitches them); its own differ")
    func stitchedPast() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.runIntervalSeconds = 3 * 3600
        let run = Date(timeIntervalSince1970: 1_785_067_200)  // 2026-07-26 12:00 UTC, a 3-hour boundary
        let query =
            "/v1/forecast?latitude=52.52&longitude=13.41&hourly=temperature_2m&timeformat=unixtime"
            + "&past_days=1&forecast_days=2&timezone=GMT"
        func series(at now: Date) async throws -> [Int: Double] {
            server.now = { now }
            let hourly = try #require(try await object(server, query)["hourly"] as? [String: [Any]])
            let times = try #require(hourly["time"] as? [Int])
            let values = try #require(hourly["temperature_2m"] as? [Double])
            return Dictionary(uniqueKeysWithValues: zip(times, values))
        }
        let a = try await series(at: run.addingTimeInterval(600))
        let b = try await series(at: run.addingTimeInterval(3 * 3600 + 600))  // the next run
        let initA = Int(run.timeIntervalSince1970)
        let initB = initA + 3 * 3600
        let before = a.keys.filter { $0 < initA }
        #expect(before.count >= 24)
        #expect(before.allSatisfy { a[$0] == b[$0] }, "hours before both runs are the same in both")
        let own = a.keys.filter { $0 >= initB }
        #expect(own.contains { a[$0] != b[$0] }, "the new run's own hours are its own")
    }

    @Test("plain answers keep the connection open for the next request; a fault closes it")
    func keepAlive() throws {
        let server = try Support.server()
        defer { server.stop() }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        /// Sends a request and reads one response (head and Content-Length body).
        func exchange(_ target: String) -> String? {
            let request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            guard
                request.utf8.withContiguousStorageIfAvailable({ send(fd, $0.baseAddress, $0.count, 0) })
                    == request.utf8.count
            else { return nil }
            var received = [UInt8]()
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let text = String(decoding: received, as: UTF8.self)
                if let end = text.range(of: "\r\n\r\n") {
                    let head = String(text[..<end.lowerBound]).lowercased()
                    let length =
                        head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                        ?? 0
                    if received.count >= text.utf8.distance(from: text.utf8.startIndex, to: end.upperBound) + length {
                        return head
                    }
                }
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return nil }
                received += chunk[0..<n]
            }
        }
        let first = try #require(exchange("/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        #expect(first.hasPrefix("http/1.1 200") && !first.contains("connection: close"))
        let second = try #require(
            exchange("/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"), "the same connection serves again")
        #expect(second.hasPrefix("http/1.1 200"))
        server.enqueue(.status(500, reason: nil))
        let failed = try #require(exchange("/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m"))
        #expect(failed.hasPrefix("http/1.1 500") && failed.contains("connection: close"))
        #expect(exchange("/v1/forecast?latitude=1&longitude=2&hourly=temperature_2m") == nil, "closed after the fault")
        #expect(server.requests.count == 3)
    }

    @Test("archive: every hour of the dates, identical across requests and runs")
    func archive() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let q =
            "/v1/archive?latitude=52.52&longitude=13.41&start_date=2024-01-01&end_date=2024-01-03&hourly=temperature_2m,precipitation&timezone=GMT"
        let a = try await body(server, q)
        server.now = { Support.fixedNow.addingTimeInterval(5 * 86400) }
        let b = try await body(server, q)
        #expect(a == b)
        let o = try #require(try Support.json(a) as? [String: Any])
        let times = try #require((o["hourly"] as? [String: Any])?["time"] as? [String])
        #expect(times.count == 72 && times.first == "2024-01-01T00:00" && times.last == "2024-01-03T23:00")

        let missing = await Support.fetch(
            Support.client(attempts: 1), Support.url(server, "/v1/archive?latitude=1&longitude=2&hourly=temperature_2m")
        ).0
        guard case .http(400, _)? = missing.failure else {
            Issue.record("archive without dates must be 400, got \(String(describing: missing))")
            return
        }
    }

    @Test("geocoding: default hollywood, registered names, unknown names without results")
    func geocoding() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let hollywood = try await body(server, "/v1/search?name=Hollywood")
        #expect(hollywood == (try Support.fixture("geocoding-search-hollywood-default-count.json")))
        let two = try await object(server, "/v1/search?name=hollywood&count=2")
        #expect((two["results"] as? [Any])?.count == 2)

        let none = try await object(server, "/v1/search?name=Nowhereville&count=5")
        #expect(none["results"] == nil && none["generationtime_ms"] != nil)

        server.registerGeocoding(
            name: "Berlin",
            body: Data(
                #"{"results":[{"id":2950159,"name":"Berlin","latitude":52.52437,"longitude":13.41053,"country_code":"DE"}],"generationtime_ms":0.3}"#
                    .utf8))
        let berlin = try await object(server, "/v1/search?name=berlin&countryCode=DE")
        #expect(((berlin["results"] as? [[String: Any]])?.first?["id"] as? Int) == 2950159)
    }

    @Test("meta.json: 404 for an unknown domain until registered; a registered time wins")
    func meta() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let missing = await Support.fetch(
            Support.client(attempts: 1), Support.url(server, "/data/nowhere_model/static/meta.json")
        ).0
        #expect(missing.failure == .http(status: 404, reason: "Not found"))

        server.registerMeta(model: "dwd_icon", lastRunInitialisationTime: 1_785_000_000)
        let o = try await object(server, "/data/dwd_icon/static/meta.json")
        #expect(o["last_run_initialisation_time"] as? Int == 1_785_000_000)
        #expect(o["update_interval_seconds"] as? Int == 21600)
        for key in [
            "last_run_modification_time", "last_run_availability_time", "temporal_resolution_seconds",
            "update_interval_seconds", "data_end_time"
        ] {
            #expect(o[key] is Int, "missing \(key)")
        }
    }

    @Test("unknown paths are 404 with an Open-Meteo error body")
    func notFound() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let r = await Support.fetch(Support.client(attempts: 3), Support.url(server, "/v2/whatever")).0
        #expect(r.failure == .http(status: 404, reason: "Not found"))
    }

    @Test("faults are queued per path prefix and consumed in order")
    func faultQueues() async throws {
        let server = try Support.server()
        defer { server.stop() }
        server.enqueue(.status(503, reason: "a"), path: "/v1/search")
        server.enqueue(.status(500, reason: "b"), path: "/v1/search")
        let client = Support.client(attempts: 1)

        // The forecast path is unaffected by the search queue.
        #expect((try? await client.get(Support.url(server, "/v1/forecast?latitude=1&longitude=2")))?.status == 200)
        let first = await Support.fetch(client, Support.url(server, "/v1/search?name=hollywood")).0
        let second = await Support.fetch(client, Support.url(server, "/v1/search?name=hollywood")).0
        let third = await Support.fetch(client, Support.url(server, "/v1/search?name=hollywood")).0
        #expect(first.failure == .http(status: 503, reason: "a"))
        #expect(second.failure == .http(status: 500, reason: "b"))
        #expect(third.success?.status == 200)
        #expect(server.requests.count == 4)
        server.resetLog()
        #expect(server.requests.isEmpty)
    }

    @Test("control API: fault, requests, reset, meta, run-interval")
    func controlAPI() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let control = Support.client(attempts: 1)
        func call(_ q: String) async throws -> Data { try await control.get(Support.url(server, q)).body }

        _ = try await call("/_control/fault?path=/v1/forecast&kind=status&code=500&reason=boom&times=2")
        let (result, attempts) = await Support.fetch(
            Support.client(attempts: 3), Support.url(server, "/v1/forecast?latitude=1&longitude=2"))
        #expect(result.success?.status == 200)
        #expect(attempts.first?.error == .http(status: 500, reason: "boom"))
        #expect(attempts.count == 3)

        let log = try #require(try Support.json(try await call("/_control/requests")) as? [String])
        #expect(log == Array(repeating: "/v1/forecast?latitude=1&longitude=2", count: 3))

        // Every kind parses.
        for kind in [
            "status&code=503", "delay&seconds=0.01", "truncated", "reset", "ratelimit", "redirect&to=/x", "wrongtype",
            "trickle&bps=100", "empty", "notjson",
            "toomany&reason=hourly&retry_after=5", "echokey&code=401", "swapped", "wrongid", "fargrid&lat=1&lon=2",
            "hugetz&length=99", "endless"
        ] {
            _ = try await call("/_control/fault?path=/never&kind=\(kind)")
        }
        let badKind = await Support.fetch(control, Support.url(server, "/_control/fault?kind=nope")).0
        guard case .http(400, _)? = badKind.failure else {
            Issue.record("unknown kind must be 400")
            return
        }

        _ = try await call("/_control/fault?kind=ratelimit&times=5")
        _ = try await call("/_control/reset")
        #expect(try Support.json(try await call("/_control/requests")) as? [String] == [])
        #expect((try? await control.get(Support.url(server, "/v1/forecast?latitude=1&longitude=2")))?.status == 200)

        _ = try await call("/_control/meta?model=ecmwf_ifs025&init=1785045600")
        let meta = try #require(
            try Support.json(try await call("/data/ecmwf_ifs025/static/meta.json")) as? [String: Any])
        #expect(meta["last_run_initialisation_time"] as? Int == 1_785_045_600)

        _ = try await call("/_control/run-interval?seconds=600")
        #expect(server.runIntervalSeconds == 600)
    }

    @Test("wxdb-replay executable prints its URL and serves", .enabled(if: ReplayProcess.executable != nil))
    func executable() async throws {
        guard let executable = ReplayProcess.executable else { return }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--fixtures", Support.fixtures.path, "--now", "2026-07-26T12:00Z"]
        let out = Pipe()
        process.standardOutput = out
        // Not the test process's own stderr: a child holding it open would keep `swift test`
        // waiting for ever if this process died before the kill below.
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // Read the single line the process prints once it is listening.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let base = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(base.hasPrefix("http://127.0.0.1:"))
        let response = try await Support.client(attempts: 1).get(URL(string: base + "/v1/search?name=hollywood")!)
        #expect(response.status == 200)
        // --now fixed the clock: GFS's 06 UTC run is there, its 12 UTC run is not yet.
        let clock = try await Support.client(attempts: 1).get(URL(string: base + "/_control/now")!)
        #expect(String(decoding: clock.body, as: UTF8.self) == #"{"ok":true,"now":1785067200}"#)
        let run = base + ReplayServer.singleRunsPath + "?latitude=1&longitude=2&models=gfs_seamless&run=2026-07-26T"
        #expect(try await Support.client(attempts: 1).get(URL(string: run + "06:00")!).status == 200)
        let early = await Support.fetch(Support.client(attempts: 1), URL(string: run + "12:00")!).0
        guard case .http(400, let reason?)? = early.failure, reason.contains("2026-07-26T12:00") else {
            Issue.record("a run not yet available must be a 400 naming it, got \(early)")
            return
        }

        // SIGTERM must end it promptly with status 0. Poll instead of waitUntilExit(), which
        // would hang the suite if the signal were lost.
        process.terminate()
        for _ in 0..<100 where process.isRunning { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(!process.isRunning, "wxdb-replay ignored SIGTERM")
        if !process.isRunning {
            #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        }
    }

    @Test(
        "wxdb-replay --env prints the exports for eval and leaves the server running",
        .enabled(if: ReplayProcess.executable != nil))
    func environment() async throws {
        guard let executable = ReplayProcess.executable else { return }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--env", "--fixtures", Support.fixtures.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var text = Data()
        while !String(decoding: text, as: UTF8.self).contains("WXDB_REPLAY_PID=") || text.last != UInt8(ascii: "\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        var exports: [String: String] = [:]
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1).map(String.init)
            exports[pair[0]] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        let pid = try #require(exports["WXDB_REPLAY_PID"].flatMap { Int32($0) })
        defer { kill(pid, SIGTERM) }
        #expect(
            Set(exports.keys) == [
                "WXDB_FORECAST_URL", "WXDB_ARCHIVE_URL", "WXDB_GEOCODING_URL", "WXDB_META_URL", "WXDB_SINGLE_RUNS_URL",
                "WXDB_ENSEMBLE_URL", "WXDB_REPLAY_PID"
            ])
        // The printing process ends (so `$(...)` returns), the server it started goes on serving.
        for _ in 0..<100 where process.isRunning { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(!process.isRunning && process.terminationStatus == 0)
        let search = try #require(exports["WXDB_GEOCODING_URL"].flatMap { URL(string: $0 + "?name=hollywood") })
        #expect(try await Support.client(attempts: 1).get(search).status == 200)
        let meta = try #require(exports["WXDB_META_URL"].flatMap { URL(string: $0 + "/dwd_icon/static/meta.json") })
        #expect(try await Support.client(attempts: 1).get(meta).status == 200)
    }
}

enum ReplayProcess {
    /// The built `wxdb-replay` next to the test bundle, if `swift build` produced it.
    static let executable: URL? = {
        var dir = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("wxdb-replay")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()
}

/// Issue 25 §2: the replay server reads whole UTC hours at any offset, like Open-Meteo.
@Suite("ReplayServer at offsets that are not whole hours")
struct ReplayWholeHourTests {
    @Test(
        "a value labelled under a +05:45 or −03:30 zone is the one read at the whole UTC hour",
        arguments: ["Asia/Kathmandu", "America/St_Johns", "Australia/Adelaide"])
    func readsWholeHours(_ zone: String) async throws {
        let server = try Support.server()
        defer { server.stop() }
        func hourly(_ timezone: String) async throws -> (offset: Int, times: [Int], values: [Double]) {
            let body = try await Support.client(attempts: 1).get(
                Support.url(
                    server,
                    "/v1/forecast?latitude=27.7&longitude=85.3&hourly=temperature_2m&past_days=1&forecast_days=2&timeformat=unixtime&timezone="
                        + timezone)
            ).body
            let object = try #require(try Support.json(body) as? [String: Any])
            let hourly = try #require(object["hourly"] as? [String: [Any]])
            return (
                try #require(object["utc_offset_seconds"] as? Int), try #require(hourly["time"] as? [Int]),
                try #require(hourly["temperature_2m"] as? [Double])
            )
        }
        let local = try await hourly(zone)
        let utc = try await hourly("GMT")
        let fraction = local.offset - (local.offset / 3600) * 3600
        #expect(fraction != 0)
        // Stamps are printed as the label less the actual offset (off the hour), as Open-Meteo does.
        #expect(local.times.allSatisfy { ($0 + local.offset) % 3600 == 0 })
        var byInstant: [Int: Double] = [:]
        for (t, v) in zip(utc.times, utc.values) { byInstant[t] = v }
        var compared = 0
        for (stamp, value) in zip(local.times, local.values) {
            guard let same = byInstant[stamp + fraction] else { continue }
            #expect(value == same, "at \(stamp + fraction)")
            compared += 1
        }
        #expect(compared > 24)
    }
}
