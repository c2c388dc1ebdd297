import Foundation
import Testing
import WxQueries

@testable import WxCore
@testable import WxSQLite
@testable import WxStore
@testable import WxStoreSQLite

/// Issue 15 point 2: the scores `query verify` reads from the kept sums are the ones the pairs give,
/// after every kind of write that changes pairs, to 1e-9.
@Suite("Verification sums agree with the pairs")
struct SumsProofTests {
    static let t0 = utcMidnight(2026, 10, 22)  // Europe/Berlin leaves summer time on the 25th
    static let hour: Int64 = 3600

    /// A small deterministic generator (64-bit LCG), so every run writes the same history.
    struct Numbers {
        var state: UInt64
        mutating func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
    }

    /// Values for every hourly variable at `time`, about a truth that a run misses by `skill`;
    /// some are missing.
    static func values(_ time: Int64, _ numbers: inout Numbers, noise: Double) -> [Double?] {
        let h = Double(time / 3600)
        let truth: [Double] = [
            8 + 5 * sin(h / 4), 70 + 20 * sin(h / 7), 3 + 3 * sin(h / 5), 6 + 5 * sin(h / 4), 50 + 50 * sin(h / 9),
            max(0, 1.5 * sin(h / 3)), 3, 50 + 50 * sin(h / 6), 1010 + 10 * sin(h / 30), 15 + 10 * sin(h / 8),
            180 + 179 * sin(h / 5), 25 + 15 * sin(h / 8)
        ]
        return truth.enumerated().map { index, value in
            if numbers.next() < 0.05 { return nil }
            var v = value + noise * (numbers.next() - 0.5) * (index == 10 ? 80 : 4)
            switch index {
            case 1, 4, 7: v = min(100, max(0, v.rounded()))
            case 5: v = max(0, (v * 10).rounded() / 10)
            case 6: v = v.rounded()
            case 10: v = (v.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360).rounded()
            default: v = (v * 10).rounded() / 10
            }
            return v
        }
    }

    static func response(model: String, times: [Int64], seed: UInt64) -> ForecastResponse {
        var numbers = Numbers(state: seed)
        var forecast = ModelForecast(model: model)
        forecast.hourlyTimes = times
        let rows = times.map { values($0, &numbers, noise: 1) }
        forecast.hourly = Variables.hourly.indices.map { index in rows.map { $0[index] } }
        return ForecastResponse(
            latitude: 52.5, longitude: 13.4, elevation: 40, utcOffsetSeconds: 3600, timezone: "Europe/Berlin",
            locationID: nil, current: nil, models: [forecast])
    }

    /// Builds the history: runs of a model with known run times (some continued through a moved
    /// window, one fetched again unchanged) and of one without (whose issue time an older copy moves
    /// back), station observations before and after the runs, replaced, corrected with an older
    /// clock, and an era5 series.
    static func build(_ store: SQLiteStore, _ location: Location) throws {
        func observe(_ source: String, _ time: Int64, seed: UInt64, recordedAt: Int64, replacing: Bool = false) throws {
            var numbers = Numbers(state: seed)
            try store.upsertObservation(
                locationID: location.id, source: source, time: time, values: values(time, &numbers, noise: 0.3),
                recordedAt: recordedAt, replacing: replacing)
        }
        // Station hours of the first days arrive before the runs...
        for k in 0..<(4 * 24) {
            try observe("station", t0 - 12 * hour + Int64(k) * hour, seed: UInt64(k), recordedAt: t0)
        }
        var runs: [(model: String, issued: Int64?, fetched: Int64, times: [Int64], seed: UInt64)] = []
        for k in 0..<10 {
            let issued = t0 + Int64(k) * 12 * hour
            let all = (-3..<96).map { issued + Int64($0) * hour }
            // Odd runs are first seen through a window that ends early, then again whole (moved on).
            if k % 2 == 1 { runs.append(("m1", issued, issued + 2 * hour, Array(all.prefix(51)), UInt64(100 + k))) }
            runs.append(("m1", issued, issued + 3 * hour, all, UInt64(100 + k)))
            if k == 0 { runs.append(("m1", issued, issued + 4 * hour, all, UInt64(100 + k))) }  // unchanged again
            if k % 3 == 0 {
                let fetched = t0 + Int64(k) * 12 * hour + 5 * hour
                runs.append(("m2", nil, fetched, (0..<72).map { fetched + Int64($0 - 2) * hour }, UInt64(200 + k)))
            }
        }
        for run in runs {
            _ = try store.store(
                response(model: run.model, times: run.times, seed: run.seed), for: location,
                fetch: FetchRecord(
                    fetchedAt: run.fetched, origin: .import,
                    issuedAt: run.issued.map { [run.model: $0] } ?? [:]))
        }
        // An older copy of the first m2 run: its issue time (its first fetch) moves two hours back.
        let first = runs.first { $0.model == "m2" }!
        _ = try store.store(
            response(model: "m2", times: first.times, seed: first.seed), for: location,
            fetch: FetchRecord(fetchedAt: first.fetched - 2 * hour, origin: .import))
        // ...the rest arrive late, some replaced by newer values, some offered with an older clock.
        for k in (4 * 24)..<(8 * 24) {
            try observe("station", t0 - 12 * hour + Int64(k) * hour, seed: UInt64(k), recordedAt: t0 + 9 * 86400)
        }
        for k in stride(from: 0, to: 8 * 24, by: 5) {
            try observe(
                "station", t0 - 12 * hour + Int64(k) * hour, seed: UInt64(5000 + k), recordedAt: t0 + 10 * 86400)
            try observe("station", t0 - 12 * hour + Int64(k + 1) * hour, seed: UInt64(7000 + k), recordedAt: 0)
        }
        for k in stride(from: 0, to: 8 * 24, by: 7) {
            try observe(
                "station", t0 - 12 * hour + Int64(k) * hour, seed: UInt64(9000 + k), recordedAt: 1, replacing: true)
        }
        // A corrected station file over two days: its temperature and precipitation become what it
        // says, a value it lacks is cleared, an hour it lacks loses both.
        var file = StationImport(variables: [0, 5])
        for k in 30..<78 where k % 10 != 0 {
            var row = [Double?](repeating: nil, count: Variables.hourly.count)
            row[0] = 4 + Double(k % 9)
            row[5] = k % 4 == 0 ? nil : Double(k % 3) / 10
            file.hours.append((t0 - 12 * hour + Int64(k) * hour, row))
        }
        file.firstHour = t0 - 12 * hour + 30 * hour
        file.lastHour = t0 - 12 * hour + 77 * hour
        try store.replaceStationObservations(
            file, locationID: location.id, source: "station", recordedAt: t0 + 11 * 86400)
        for k in 0..<(6 * 24) { try observe("era5", t0 + Int64(k) * hour, seed: UInt64(3000 + k), recordedAt: t0) }
    }

    typealias Answer = Result<VerifyResult, QueryError>

    /// Every question: each scored variable, grouping, unit system, source and range, and another
    /// threshold for the precipitation variables.
    static func questions(ranges: [TimeRange]) -> [VerifyOptions] {
        var all: [VerifyOptions] = []
        for variable in SQLiteStore.summedVariables {
            for grouping in VerifyGrouping.allCases {
                for units in UnitSystem.allCases {
                    for source in ["station", "analysis:m1", "era5"] {
                        for range in ranges {
                            let thresholds = variable.hasEvent || variable.isProbability ? [0.1, 0.5] : [0.1]
                            for threshold in thresholds {
                                all.append(
                                    VerifyOptions(
                                        variable: variable, source: source, range: range, grouping: grouping,
                                        thresholdMillimetres: threshold, units: units))
                            }
                        }
                    }
                }
            }
        }
        return all
    }

    static func answer(_ store: SQLiteStore, _ location: Location, _ options: VerifyOptions) throws -> Answer {
        do {
            return .success(try VerifyQuery.verify(store, location: location, options: options))
        } catch let error as QueryError {
            return .failure(error)
        }
    }

    /// Both answers have the same rows, and every number in them agrees to 1e-9 of its size.
    static func expectSame(_ sums: Answer, _ pairs: Answer, _ options: VerifyOptions) {
        let what =
            "\(options.variable.name) by \(options.grouping) \(options.units) \(options.source ?? "") "
            + "\(options.range) threshold \(options.thresholdMillimetres)"
        switch (sums, pairs) {
        case (.failure, .failure): return
        case (.success(let a), .success(let b)):
            #expect(a.rows.count == b.rows.count, "\(what)")
            for (x, y) in zip(a.rows, b.rows) {
                #expect(x.model == y.model && x.leadFromHours == y.leadFromHours, "\(what)")
                #expect(x.firstValidTime == y.firstValidTime && x.lastValidTime == y.lastValidTime, "\(what)")
                #expect(x.scores.n == y.scores.n, "n \(what) lead \(x.leadFromHours)")
                #expect(x.persistence.n == y.persistence.n, "persistence n \(what) lead \(x.leadFromHours)")
                #expect(x.contingency == y.contingency, "2x2 \(what) lead \(x.leadFromHours)")
                #expect(x.brier?.n == y.brier?.n && x.brier?.occurrences == y.brier?.occurrences, "\(what)")
                let numbers: [(String, Double?, Double?)] = [
                    ("bias", x.scores.bias, y.scores.bias), ("mae", x.scores.mae, y.scores.mae),
                    ("rmse", x.scores.rmse, y.scores.rmse), ("error_sd", x.scores.errorStdDev, y.scores.errorStdDev),
                    ("correlation", x.scores.correlation, y.scores.correlation),
                    ("mean_forecast", x.scores.meanForecast, y.scores.meanForecast),
                    ("mean_observed", x.scores.meanObserved, y.scores.meanObserved),
                    ("persistence_rmse", x.persistence.persistenceRMSE, y.persistence.persistenceRMSE),
                    ("persistence_skill", x.persistenceSkill, y.persistenceSkill),
                    ("brier", x.brier?.score, y.brier?.score)
                ]
                for (name, p, q) in numbers {
                    #expect((p == nil) == (q == nil), "\(name) \(what) lead \(x.leadFromHours)")
                    if let p, let q {
                        #expect(abs(p - q) <= 1e-9 * max(1, abs(p), abs(q)), "\(name) \(p) vs \(q): \(what)")
                    }
                }
            }
        default:
            Issue.record("one way answered and the other did not: \(what): \(sums) / \(pairs)")
        }
    }

    @Test(
        "every score, both ways (kept sums, raw pairs), after late, replaced and repeated data, moved windows, a moved issue time, prune and a zone change"
    )
    func bothWays() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let store = try SQLiteStore.open(path: box.db)
        var location = try store.addLocation(
            name: "Proof", latitude: 52.5, longitude: 13.4, elevation: 40, timezone: "Europe/Berlin",
            models: ["m1", "m2"], now: 0)
        try Self.build(store, location)

        let day = { (d: Int64) -> Int64 in
            ZoneTime.span(
                ofDate: ZoneTime.date(of: Self.t0 + d * 86400, timezone: "Europe/Berlin"), timezone: "Europe/Berlin")!
                .start
        }
        let whole = TimeRange(from: day(1), to: day(4))
        let cut = TimeRange(from: day(1) + 5 * Self.hour, to: day(4) + 7 * Self.hour)
        var answered = 0
        var snapshot: [Answer] = []
        let questions = Self.questions(ranges: [TimeRange(), whole, cut])
        for options in questions {
            var pairs = options
            pairs.pairsOnly = true
            let both = (try Self.answer(store, location, options), try Self.answer(store, location, pairs))
            Self.expectSame(both.0, both.1, options)
            if case .success(let result) = both.0 {
                answered += 1
                // Without a cut day or another threshold, the answer is the sums' alone.
                if options.range != cut && options.thresholdMillimetres == 0.1 { #expect(result.pairNotes.isEmpty) }
                if options.range == cut { #expect(!result.pairNotes.isEmpty) }
            }
            snapshot.append(both.1)
        }
        #expect(answered > 300)
        #expect(await box.run("doctor", "--deep").code == 0)

        // Prune the first days' runs: the sums keep answering what the pairs answered before.
        #expect(try Pruner.prune(store, keepDays: 3, now: Self.t0 + 6 * 86400).runs > 0)
        var pruned: [Int: Answer] = [:]
        for (index, (options, before)) in zip(questions, snapshot).enumerated()
        where options.range != cut && options.thresholdMillimetres == 0.1 {
            pruned[index] = try Self.answer(store, location, options)
            Self.expectSame(pruned[index]!, before, options)
        }
        let deep = await box.run("doctor", "--deep")
        #expect(deep.code == 0, "\(deep.stderrText)")
        #expect(deep.stdout.contains("not checkable"), "\(deep.stdout)")

        // A zone change moves the stored pairs to the new zone's days; pruned sums keep theirs.
        _ = try store.updateLocation(named: "Proof", timezone: "America/New_York", models: nil)
        location = try #require(try store.location(named: "Proof"))
        #expect(await box.run("doctor", "--deep").code == 0)
        // Over all time and not by day, the zone only relabels days: every pair, kept in sums or in rows,
        // still counts once, so each answer is the one before the change.
        var compared = 0
        for (index, options) in questions.enumerated()
        where options.range == TimeRange() && options.grouping != .day && options.thresholdMillimetres == 0.1 {
            let before = try #require(pruned[index])
            Self.expectSame(try Self.answer(store, location, options), before, options)
            if case .success = before { compared += 1 }
        }
        #expect(compared > 20)
        // By day, the days are the new zone's: the rows' pairs add up to the same n as before.
        for (index, options) in questions.enumerated()
        where options.range == TimeRange() && options.grouping == .day && options.thresholdMillimetres == 0.1 {
            guard case .success(let before) = try #require(pruned[index]) else { continue }
            let after = try Self.answer(store, location, options).get()
            #expect(
                after.rows.reduce(0) { $0 + $1.scores.n } == before.rows.reduce(0) { $0 + $1.scores.n },
                "\(options.variable.name) \(options.source ?? "") by day: n after the zone change")
        }
    }

    @Test(
        "one import of several responses with a later fetch time: each overwrites the analysis hours of the one before, sums still agree with the pairs"
    )
    func oneImportOverwritingAnalysis() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let store = try SQLiteStore.open(path: box.db)
        let location = try store.addLocation(
            name: "Proof", latitude: 52.5, longitude: 13.4, elevation: 40, timezone: "Europe/Berlin",
            models: ["m1", "m2"], now: 0)
        try Self.build(store, location)
        // New runs between the stored ones, a stored run again, a stored run's older copy, one with
        // more hours than stored (continued), and responses of overlapping hours with other values:
        // all stored at once, fetched after their last hour, so every hour is an analysis one.
        let late = Self.t0 + 20 * 86400
        let items: [(model: String, issued: Int64?, times: [Int64], seed: UInt64)] = [
            ("m1", Self.t0 + 6 * Self.hour, (-3..<60).map { Self.t0 + Int64($0 + 6) * Self.hour }, 400),
            ("m1", Self.t0 + 12 * Self.hour, (-3..<96).map { Self.t0 + Int64($0 + 12) * Self.hour }, 101),
            ("m1", Self.t0 + 18 * Self.hour, (0..<72).map { Self.t0 + Int64($0 + 18) * Self.hour }, 401),
            ("m2", nil, (0..<72).map { Self.t0 + Int64($0 + 3) * Self.hour }, 200),
            ("m1", Self.t0 + 30 * Self.hour, (-3..<80).map { Self.t0 + Int64($0 + 30) * Self.hour }, 402),
            ("m1", Self.t0 + 36 * Self.hour, (-3..<120).map { Self.t0 + Int64($0 + 36) * Self.hour }, 103),
            ("m1", Self.t0 + 6 * Self.hour, (-3..<60).map { Self.t0 + Int64($0 + 6) * Self.hour }, 403)
        ]
        let outcomes = try store.storeAll(items, for: location) { item in
            (
                Self.response(model: item.model, times: item.times, seed: item.seed),
                FetchRecord(
                    fetchedAt: late, origin: .import, issuedAt: item.issued.map { [item.model: $0] } ?? [:])
            )
        }
        #expect(outcomes.contains { $0.kind == .stored } && outcomes.contains { $0.kind == .repeated })
        let questions = Self.questions(ranges: [TimeRange()]).filter { $0.thresholdMillimetres == 0.1 }
        var answered = 0
        for options in questions {
            var pairs = options
            pairs.pairsOnly = true
            let both = (try Self.answer(store, location, options), try Self.answer(store, location, pairs))
            Self.expectSame(both.0, both.1, options)
            if case .success = both.0, options.source == "analysis:m1" { answered += 1 }
        }
        #expect(answered > 50)
        let deep = await box.run("doctor", "--deep")
        #expect(deep.code == 0, "\(deep.stderrText)")
    }

    @Test("doctor --deep finds sums that differ from the rows, says what to do, and --repair fixes them")
    func doctorFindsAndRepairs() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let store = try SQLiteStore.open(path: box.db)
        let location = try store.addLocation(
            name: "Proof", latitude: 52.5, longitude: 13.4, elevation: 40, timezone: "Europe/Berlin",
            models: ["m1", "m2"], now: 0)
        try Self.build(store, location)
        // One group's sums off by a pair.
        try store.db.run(
            """
            UPDATE verification_summaries SET n = n + 1, sum_err = sum_err + 0.5
            WHERE (location_id, source, variable, model, lead_from_h, valid_from) =
                  (SELECT location_id, source, variable, model, lead_from_h, valid_from FROM verification_summaries
                   WHERE variable = 'temperature_2m' LIMIT 1)
            """)
        let found = await box.run("doctor", "--deep")
        #expect(found.code == 1)
        #expect(found.stderrText.contains("1 of "), "\(found.stderrText)")
        #expect(found.stderrText.contains("wxdb doctor --deep --repair"), "\(found.stderrText)")
        let repaired = await box.run("doctor", "--deep", "--repair")
        #expect(repaired.code == 0, "\(repaired.stderrText)")
        #expect(repaired.stdout.contains("repaired 1 of"), "\(repaired.stdout)")
        #expect(await box.run("doctor", "--deep").code == 0)
    }

    @Test(
        "a database made before migration 0010 answers as before once opened: its rows' sums are added, old pruned sums kept"
    )
    func upgradeFromPreviousSchema() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        // Today's database, for the data and for the answers the pairs give.
        let current = try SQLiteStore.open(path: box.db)
        let location = try current.addLocation(
            name: "Proof", latitude: 52.5, longitude: 13.4, elevation: 40, timezone: "Europe/Berlin",
            models: ["m1", "m2"], now: 0)
        try Self.build(current, location)
        let questions = Self.questions(ranges: [TimeRange(from: Self.t0 - 2 * 86400)]).filter {
            $0.thresholdMillimetres == 0.1
        }
        let expected = try questions.map { options in
            var pairs = options
            pairs.pairsOnly = true
            return try Self.answer(current, location, pairs)
        }

        // The same rows in a database at the schema before 0010, with one day prune folded in before
        // migration 0006 (no span) for a run that is gone.
        let old = box.folder.appendingPathComponent("old.sqlite").path
        do {
            let db = try Database(path: old)
            _ = try Migrator(migrations: Schema.migrations.filter { $0.name < "0010" }).migrate(db, now: 0)
            try db.execute("ATTACH DATABASE '\(box.db)' AS today")
            for table in ["locations", "forecast_runs", "hourly_forecasts", "daily_forecasts", "observations"] {
                try db.execute("INSERT INTO main.\(table) SELECT * FROM today.\(table)")
            }
            try db.execute("DETACH DATABASE today")
            try db.run(
                """
                INSERT INTO verification_summaries (location_id, model, source, variable, lead_from_h, lead_to_h, valid_date,
                    n, sum_f, sum_o, sum_ff, sum_oo, sum_fo, sum_abs_err, sum_err, sum_err_sq)
                VALUES (?, 'm1', 'station', 'temperature_2m', 24, 48, '2026-10-01', 2, 10, 8, 52, 34, 42, 2, 2, 2)
                """, [.integer(location.id)])
            let issued = utcMidnight(2026, 9, 30)
            try db.run(
                """
                INSERT INTO forecast_runs (location_id, model, issued_at, issued_at_source, fetched_at, utc_offset_seconds,
                    timezone, content_hash, first_valid_time, last_valid_time, hour_count, day_count, pruned_at)
                VALUES (?, 'm1', ?, 'model_run', ?, 7200, 'Europe/Berlin', 1, ?, ?, 96, 4, ?)
                """,
                [
                    .integer(location.id), .integer(issued), .integer(issued), .integer(issued),
                    .integer(issued + 95 * 3600), .integer(issued + 10 * 86400)
                ])
        }
        let upgraded = try SQLiteStore.open(path: old)
        #expect(try !upgraded.sumsPending())
        // The history's days answer as the pairs did; the old pruned day is there as well, on its own.
        for (options, before) in zip(questions, expected) {
            Self.expectSame(try Self.answer(upgraded, location, options), before, options)
        }
        let day = try #require(ZoneTime.span(ofDate: "2026-10-01", timezone: "Europe/Berlin"))
        let oldDay = VerifyOptions(
            variable: Variables.hourly[0], source: "station", range: TimeRange(from: day.start, to: day.end))
        let oldRow = try #require(try Self.answer(upgraded, location, oldDay).get().rows.first)
        #expect(oldRow.scores.n == 2 && oldRow.leadFromHours == 24 && oldRow.scores.bias == 1)
        #expect(await box.run("doctor", "--deep", "--db", old).code == 0)
    }
}
