import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxCLI

/// A replay sandbox whose server and wxdb share one fixed clock, with the Single Runs API set.
private func backfillSandbox(now: Int64 = 1_785_000_000) throws -> ReplaySandbox {
    let replay = try ReplaySandbox()
    let clock = Date(timeIntervalSince1970: TimeInterval(now))
    replay.box.now = clock
    replay.server.now = { clock }
    replay.box.environment["WXDB_SINGLE_RUNS_URL"] = replay.server.baseURL + ReplayServer.singleRunsPath
    return replay
}

private func json(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

/// (model, issued_at, issued_at_source, content_hash) of every run, in order: what "the same runs" means.
private func runs(_ replay: ReplaySandbox) throws -> [String] {
    try SQLiteBackdoor(replay.box.db).db.rows(
        "SELECT model, issued_at, issued_at_source, content_hash, hour_count FROM forecast_runs ORDER BY model, issued_at"
    ) { "\($0.string(0)) \($0.int64(1)) \($0.string(2)) \($0.int64(3)) \($0.int64(4))" }
}

/// The `run=` times the server was asked for, as Unix seconds.
private func requestedRuns(_ replay: ReplaySandbox) -> [Int64] {
    replay.server.requests.filter { $0.hasPrefix(ReplayServer.singleRunsPath) }.compactMap { line in
        guard let item = URLComponents(string: line)?.queryItems?.first(where: { $0.name == "run" })?.value,
            let parsed = CivilTime.parse(item + "Z"), let offset = parsed.offset
        else { return nil }
        return parsed.wallSeconds - Int64(offset)
    }
}

@Suite("wxdb backfill through the replay server's Single Runs API", .serialized)
struct BackfillTests {
    @Test(
        "two models, 30 days: every lead bucket to 16 days with n equal to the pairs; a second backfill asks for nothing"
    )
    func twoModelsThirtyDays() async throws {
        let replay = try backfillSandbox()
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin",
                "--models", "icon_seamless,ecmwf_ifs025"
            ).code == 0)
        // One run a day keeps the test small; the models' own cadence is checked below.
        let first = await replay.run(
            "backfill", "--location", "Field", "--days", "30", "--every", "24", "--format", "json")
        #expect(first.code == 0, "\(first.stderrText)")
        let summary = try json(first.stdout)
        let requested = requestedRuns(replay)
        #expect(summary["requested"] as? Int == requested.count)
        #expect(summary["stored"] as? Int == requested.count)
        #expect(summary["failed"] as? Int == 0)
        #expect((summary["observations_stored"] as? Int ?? 0) > 24 * 30)
        #expect(first.stderrText.contains("% of Open-Meteo's free hourly budget"))

        // Each stored run's issue time is the run asked for, and it says it came from the archive.
        let stored = try replay.box.storedRuns().map { ($0.issuedAt, $0.issuedAtSource) }.sorted { $0.0 < $1.0 }
        #expect(stored.map(\.0) == requested.sorted())
        #expect(Set(stored.map(\.1)) == ["single_run"])
        #expect(requested.allSatisfy { $0 % 86400 == 0 })

        let verify = await replay.run("query", "verify", "--location", "Field", "--by", "model", "--format", "json")
        #expect(verify.code == 0, "\(verify.stderrText)")
        let rows = try #require(try json(verify.stdout)["rows"] as? [[String: Any]])
        // Counted independently: every (run, hour) with a forecast and an era5 observation, 0 <= lead < 384 h.
        let pairs = try SQLiteBackdoor(replay.box.db).db.rows(
            """
            SELECT r.model, CASE WHEN (h.valid_time - r.issued_at) < 21600 THEN 0
                WHEN (h.valid_time - r.issued_at) < 43200 THEN 6 WHEN (h.valid_time - r.issued_at) < 86400 THEN 12
                ELSE (h.valid_time - r.issued_at) / 86400 * 24 END AS bucket, count(*)
            FROM forecast_runs r JOIN hourly_forecasts h ON h.run_id = r.id
            JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time AND o.source = 'era5'
            WHERE h.valid_time >= r.issued_at AND h.valid_time < r.issued_at + 384 * 3600
              AND h.temperature_2m IS NOT NULL AND o.temperature_2m IS NOT NULL
            GROUP BY 1, 2
            """
        ) { "\($0.string(0)) \($0.int64(1)) \($0.int64(2))" }
        let reported = rows.map {
            "\($0["model"] as? String ?? "") \($0["lead_from_h"] as? Int ?? -1) \($0["n"] as? Int ?? -1)"
        }
        #expect(reported.sorted() == pairs.sorted())
        let buckets = [0, 6, 12] + stride(from: 24, through: 360, by: 24).map { $0 }
        for model in ["icon_seamless", "ecmwf_ifs025"] {
            #expect(rows.filter { $0["model"] as? String == model }.map { $0["lead_from_h"] as? Int ?? -1 } == buckets)
        }

        // Again: no request for a run already stored, and nothing new.
        let before = try runs(replay)
        let singleRuns = replay.server.requestCount(path: ReplayServer.singleRunsPath)
        let again = await replay.run(
            "backfill", "--location", "Field", "--days", "30", "--every", "24", "--format", "json")
        #expect(again.code == 0, "\(again.stderrText)")
        #expect(replay.server.requestCount(path: ReplayServer.singleRunsPath) == singleRuns)
        #expect(try json(again.stdout)["already_present"] as? Int == requested.count)
        #expect(try runs(replay) == before)

        // The summary line's request count is every request the repeat sent, the archive's included.
        let sentBefore = replay.server.requests.count
        let archive = replay.server.requestCount(path: "/v1/archive")
        let text = await replay.run("backfill", "--location", "Field", "--days", "30", "--every", "24")
        #expect(text.code == 0, "\(text.stderrText)")
        let sent = replay.server.requests.count - sentBefore
        #expect(sent > 0)
        #expect(text.stderrText.contains("(\(sent) requests)"), "\(text.stderrText)")
        let repeated = try json(again.stdout)
        #expect(repeated["requested"] as? Int == 0)
        #expect(repeated["observation_requests"] as? Int == replay.server.requestCount(path: "/v1/archive") - archive)
    }

    @Test(
        "the demo's forecasts behave like forecasts: MAE at 5-7 days at least 1.5x MAE at 0-6 h, models of different skill"
    )
    func errorGrowsWithLead() async throws {
        let replay = try backfillSandbox()
        #expect(
            await replay.run(
                "locations", "add", "Hamburg", "--lat", "53.55", "--lon", "9.99", "--timezone", "Europe/Berlin",
                "--models", "icon_seamless,ecmwf_ifs025"
            ).code == 0)
        let backfill = await replay.run("backfill", "--location", "Hamburg", "--days", "30", "--every", "12")
        #expect(backfill.code == 0, "\(backfill.stderrText)")
        for variable in ["temperature_2m", "wind_speed_10m"] {
            let verify = await replay.run(
                "query", "verify", "--location", "Hamburg", "--by", "model", "--var", variable, "--format", "json")
            #expect(verify.code == 0, "\(verify.stderrText)")
            let rows = try #require(try json(verify.stdout)["rows"] as? [[String: Any]])
            func mae(_ model: String, _ leads: ClosedRange<Int>) -> Double {
                let kept = rows.filter {
                    $0["model"] as? String == model && leads.contains($0["lead_from_h"] as? Int ?? -1)
                }
                let n = kept.map { Double($0["n"] as? Int ?? 0) }.reduce(0, +)
                return kept.map { ($0["mae"] as? Double ?? .nan) * Double($0["n"] as? Int ?? 0) }.reduce(0, +) / n
            }
            for model in ["icon_seamless", "ecmwf_ifs025"] {
                let short = mae(model, 0...0), week = mae(model, 120...144)
                #expect(week >= 1.5 * short, "\(variable) \(model): MAE \(short) at 0-6 h, \(week) at 5-7 days")
            }
            // The two models are not equally good, at every range.
            #expect(mae("ecmwf_ifs025", 0...360) < 0.9 * mae("icon_seamless", 0...360))
        }
    }

    @Test("the model's cadence from meta.json, aligned to 00 UTC; runs, fetch log and 'query runs' say single run")
    func cadenceAndIssueTimes() async throws {
        let replay = try backfillSandbox()
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--models", "icon_seamless"
            )
            .code == 0)
        let result = await replay.run("backfill", "--location", "Field", "--days", "2", "--no-observations")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("icon_seamless: a run every 6 h (meta.json)"))
        let now: Int64 = 1_785_000_000
        let latest = Int64(replay.server.latestRun(model: "icon_seamless"))
        let expected = stride(from: (now - 2 * 86400 + 21599) / 21600 * 21600, through: latest, by: 21600).map { $0 }
        #expect(requestedRuns(replay) == expected)
        #expect(replay.server.requestCount(path: "/v1/archive") == 0)
        let db = try SQLiteBackdoor(replay.box.db).db
        #expect(
            try db.scalarInt("SELECT count(*) FROM fetch_log WHERE origin = 'single_run' AND outcome = 'stored'")
                == Int64(expected.count))
        // A backfilled run's hours are forecasts, never analysis observations.
        #expect(try db.scalarInt("SELECT count(*) FROM observations") == 0)
        let listed = await replay.run("query", "runs", "--location", "Field", "--format", "json")
        let listedRuns = try #require(try json(listed.stdout)["runs"] as? [[String: Any]])
        #expect(
            listedRuns.map { $0["issued_at_source"] as? String }
                == Array(repeating: "single_run", count: expected.count))
        let table = await replay.run("query", "runs", "--location", "Field")
        #expect(table.stdout.contains("single-run archive"))
    }

    @Test("when meta.json cannot be read, the built-in cadence is used and said so")
    func builtInCadence() async throws {
        let replay = try backfillSandbox()
        replay.box.environment["WXDB_META_URL"] = "http://127.0.0.1:9/data"
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--models", "icon_seamless"
            )
            .code == 0)
        let result = await replay.run("backfill", "--location", "Field", "--days", "1", "--no-observations")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(
            result.stderrText.contains(
                "icon_seamless: its model metadata (meta.json) could not be read; using wxdb's built-in cadence of every 6 hours"
            ))
        #expect(requestedRuns(replay).allSatisfy { $0 % 21600 == 0 && $0 <= 1_785_000_000 - 6 * 3600 })
        #expect(!requestedRuns(replay).isEmpty)
    }

    @Test("a live ingest of a run already backfilled adds no run")
    func liveIngestAfterBackfill() async throws {
        let replay = try backfillSandbox()
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--models", "icon_seamless"
            )
            .code == 0)
        #expect(await replay.run("backfill", "--location", "Field", "--days", "1", "--no-observations").code == 0)
        let before = try runs(replay)
        let ingest = await replay.run("ingest")
        #expect(ingest.code == 0, "\(ingest.stderrText)")
        #expect(ingest.stderrText.contains("ingest: 0 stored, 1 repeated"))
        #expect(
            try runs(replay).map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
                == before.map {
                    $0.split(separator: " ").prefix(3).joined(separator: " ")
                })
    }

    @Test(
        "the report's fetch calendar shows backfilled runs at their initialisation hours, not at the minute of the backfill"
    )
    func coverageAtRunTimes() async throws {
        let replay = try backfillSandbox()
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--models", "icon_seamless"
            )
            .code == 0)
        #expect(
            await replay.run("backfill", "--location", "Field", "--days", "3", "--every", "12", "--no-observations")
                .code == 0)
        let store = try SQLiteStore.open(path: replay.box.db)
        let location = try #require(try store.locations().first)
        let hours = try store.fetchHours(locationID: location.id, from: nil, to: nil)
        #expect(hours.map(\.hour) == requestedRuns(replay).sorted())
        #expect(hours.count >= 5 && hours.allSatisfy { $0.stored == 1 && $0.failed == 0 })
    }

    @Test("runs before the archive's start are not requested; a run the archive refuses is named and skipped")
    func unavailableRuns() async throws {
        let replay = try backfillSandbox()
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--models", "icon_seamless"
            )
            .code == 0)
        // 2026-03-31 .. 2026-04-02 UTC; the archive starts on 2026-04-02.
        let early = await replay.run(
            "backfill", "--location", "Field", "--from", "2026-03-31T00:00Z", "--to", "2026-04-02T12:00Z",
            "--no-observations", "--format", "json")
        #expect(early.code == 0, "\(early.stderrText)")
        #expect(
            early.stderrText.contains(
                "Field icon_seamless: 8 runs from 2026-03-31T00:00Z to 2026-04-01T18:00Z are before the archive's start (2026-04-02); not requested"
            ))
        #expect(requestedRuns(replay) == [1_775_088_000, 1_775_109_600, 1_775_131_200])
        #expect(try json(early.stdout)["unavailable"] as? Int == 8)

        // Every 3 hours, where the model runs every 6: the archive answers 400 for the runs between.
        replay.server.resetLog()
        let between = await replay.run(
            "backfill", "--location", "Field", "--from", "2026-05-01T00:00Z", "--to", "2026-05-01T06:00Z", "--every",
            "3",
            "--no-observations", "--format", "json")
        #expect(between.code == 0, "\(between.stderrText)")
        #expect(between.stderrText.contains("Field icon_seamless run 2026-05-01T03:00Z: not available"))
        #expect(requestedRuns(replay).count == 3)  // 03:00 asked once, not retried
        let summary = try json(between.stdout)
        #expect(summary["unavailable"] as? Int == 1)
        #expect(summary["stored"] as? Int == 2)
    }

    @Test("stopped by a spent daily budget and run again, it ends with exactly the runs of an uninterrupted backfill")
    func interruptedThenResumed() async throws {
        let arguments = ["backfill", "--location", "Field", "--days", "3", "--no-observations", "--format", "json"]
        let whole = try backfillSandbox()
        let stopped = try backfillSandbox()
        for replay in [whole, stopped] {
            #expect(
                await replay.run(
                    "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--models",
                    "icon_seamless,gfs_seamless"
                ).code == 0)
        }
        #expect(await whole.box.run(arguments).code == 0)

        // Today's budget nearly spent earlier today (not this hour): room for 5 requests of weight 2.29 (a transport fault on the way is retried).
        try SQLiteStore.open(path: stopped.box.db).logFetch(
            FetchRecord(fetchedAt: 1_784_937_600 + 60, origin: .fetch, apiWeight: 10_000 - 5 * 2.29 - 1 - 0.1),
            locationID: nil, model: nil, outcome: "failed", runID: nil, error: nil)
        stopped.server.enqueue(.status(503, reason: nil), path: ReplayServer.singleRunsPath)
        let first = await stopped.box.run(arguments)
        #expect(first.code == 1)
        #expect(first.stderrText.contains("run the same command again after 2026-07-26T00:00:00Z"))
        #expect(try json(first.stdout)["stored"] as? Int == 5)
        #expect(try runs(stopped).count == 5)
        // A new day's budget: the planted spending is taken back (no command forgets a logged fetch).
        try SQLiteBackdoor(stopped.box.db).db.run("DELETE FROM fetch_log WHERE run_id IS NULL AND origin = 'fetch'")
        let second = await stopped.box.run(arguments)
        #expect(second.code == 0, "\(second.stderrText)")
        #expect(try json(second.stdout)["already_present"] as? Int == 5)
        #expect(try runs(stopped) == runs(whole))
    }

    @Test("Open-Meteo's own daily limit (429) stops the backfill cleanly, saying when to run it again")
    func serverDailyLimit() async throws {
        let replay = try backfillSandbox()
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--models", "icon_seamless"
            )
            .code == 0)
        replay.server.enqueue(
            .tooManyRequests(reason: ReplayServer.dailyLimitReason, retryAfter: nil), path: ReplayServer.singleRunsPath)
        let result = await replay.run("backfill", "--location", "Field", "--days", "2", "--format", "json")
        #expect(result.code == 1)
        #expect(requestedRuns(replay).count == 1)  // not retried, nothing more asked
        #expect(replay.server.requestCount(path: "/v1/archive") == 0)
        let summary = try json(result.stdout)
        #expect(summary["stored"] as? Int == 0)
        #expect(
            (summary["stopped"] as? String)?.contains(
                "daily limit is reached; run the same command again after 2026-07-26T00:00:00Z") == true)
        #expect(result.stderrText.contains("Error: backfill: 0 runs stored"))
    }

    @Test(
        "wrong options are usage errors",
        arguments: [
            ["backfill", "--location", "Field"],
            ["backfill", "--days", "3", "--from", "2026-05-01"],
            ["backfill", "--days", "3", "--to", "2026-05-01"],
            ["backfill", "--days", "3", "--every", "4"],
            ["backfill", "--days", "0"]
        ])
    func usage(_ arguments: [String]) async throws {
        let box = Sandbox()
        let result = await box.run(arguments)
        #expect(result.code == 64, "\(result.stderrText)")
    }

    @Test("best_match has no single run: a location with only best_match is refused with what to do")
    func blendOnly() async throws {
        let replay = try backfillSandbox()
        #expect(await replay.run("locations", "add", "Field", "--lat", "52.52", "--lon", "13.41").code == 0)
        let result = await replay.run("backfill", "--days", "2")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("--model icon_seamless"))
        #expect(replay.server.requests.isEmpty)
    }
}
