import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxPostgresStore
import WxQueries
import WxSQLite
import WxStore
import WxStoreSQLite

// Every read of the Store interface asked the same questions on both engines over the same history
// must give the same answer, row for row and bit for bit: the commands print what these return, so
// this is what keeps their output byte-identical on SQLite and PostgreSQL.

/// Opens a fresh, migrated store of `engine`.
func freshStore(_ engine: StoreEngine, icuLocale: String? = nil) throws -> any Store {
    let target = try engine.freshDatabase("reads", icuLocale: icuLocale)
    switch engine {
    case .sqlite: return try SQLiteStore.open(path: target)
    case .postgres: return try PostgresEngine(conninfo: target, now: 1_700_000_000)
    }
}

/// The fixed history both engines hold: two locations; Berlin's two-model response fetched, fetched
/// again (a repeat), then changed and imported as a second run; observations of four sources, two
/// of them with as many hours, whose names sort one way bytewise ("Station" before "alpha", as
/// SQLite sorts) and the other way by a language's collation.
private enum History {
    static let t0: Int64 = 1_700_000_000

    static func responses() throws -> [(ForecastResponse, FetchRecord)] {
        // The fixture holds weather codes only: temperature and precipitation are filled in.
        var first = try berlinResponse()
        let temperature = try #require(Variables.hourlyNames.firstIndex(of: "temperature_2m"))
        let precipitation = try #require(Variables.hourlyNames.firstIndex(of: "precipitation"))
        for (m, model) in first.models.enumerated() {
            first.models[m].hourly[temperature] = model.hourlyTimes.enumerated().map { row, time in
                8 + 5 * sin(Double(time % 86400) / 86400 * 2 * Double.pi) + Double(m) * 0.7 + Double(row % 3) * 0.1
            }
            first.models[m].hourly[precipitation] = model.hourlyTimes.indices.map {
                $0 % 7 < 2 ? Double($0 % 4) * 0.2 : 0
            }
        }
        var second = first
        for index in second.models.indices {
            second.models[index].hourly[temperature] = second.models[index].hourly[temperature]?.map {
                $0.map { $0 + 0.5 }
            }
        }
        return [
            (first, FetchRecord(fetchedAt: t0, origin: .fetch, request: "https://api/forecast?a", apiWeight: 1.5)),
            (first, FetchRecord(fetchedAt: t0 + 3600, origin: .fetch, request: "https://api/forecast?a")),
            (second, FetchRecord(fetchedAt: t0 + 6 * 3600, origin: .import, request: "file.json"))
        ]
    }

    /// The station hours: each run hour from the first fetch on, the forecast plus a fixed pattern.
    static func observations(_ response: ForecastResponse) -> [(source: String, time: Int64, values: [Double?])] {
        let model = response.models[0]
        var rows: [(String, Int64, [Double?])] = []
        for (row, time) in model.hourlyTimes.enumerated() where time >= t0 - 7200 {
            let values = model.hourly.map { column in column?[row].map { $0 + Double(row % 5) * 0.3 - 0.6 } }
            rows.append(("Station", time, values))
            // As many hours as "Station": the two sort by name, which bytewise puts "Station" first.
            rows.append(("alpha", time, values.map { $0.map { $0 + 0.1 } }))
            if row % 2 == 0 { rows.append(("era5", time, values.map { $0.map { $0 - 0.25 } })) }
            if row % 3 == 0 { rows.append(("analysis:gfs_seamless", time, values)) }
        }
        return rows
    }

    /// Fills `store` through the Store interface (SQLite), or `postgres` through the engine's own
    /// writes where the Store's are not there yet, with the observations SQLite holds copied over.
    static func fill(sqlite: SQLiteStore, postgres: PostgresEngine) throws {
        let responses = try responses()
        for name in ["Berlin", "Oslo"] {
            let place = try sqlite.addLocation(
                name: name, latitude: 52.52, longitude: 13.41, elevation: name == "Berlin" ? 34 : nil,
                timezone: "Europe/Berlin", models: ["best_match", "gfs_seamless"], now: t0 - 86400)
            let mirror = try postgres.addLocation(
                name: name, latitude: 52.52, longitude: 13.41, elevation: name == "Berlin" ? 34 : nil,
                timezone: "Europe/Berlin", models: ["best_match", "gfs_seamless"], now: t0 - 86400)
            #expect(place.id == mirror.id)
            for (response, fetch) in responses {
                _ = try sqlite.store(response, for: place, fetch: fetch)
                _ = try postgres.storeRuns(response, for: mirror, fetch: fetch)
            }
            for (source, time, values) in observations(responses[0].0) {
                try sqlite.upsertObservation(
                    locationID: place.id, source: source, time: time, values: values, recordedAt: t0, replacing: false)
            }
        }
        // Every observation SQLite holds (its own analysis and current ones included), copied.
        let columns = ["location_id", "source", "time", "recorded_at"] + Variables.hourlyNames
        let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
        var copied: [[PostgresValue]] = []
        try sqlite.forEachObservation(Variables.hourly, ExportFilter()) { row in
            let id = row.location.string == "Berlin" ? Int64(1) : 2
            copied.append(
                [.integer(id), .text(row.source.string), .integer(row.time), .integer(t0)]
                    + row.values.map { $0.map(PostgresValue.real) ?? .null })
        }
        for values in copied {
            try postgres.db.run(
                "INSERT INTO observations (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", values)
        }
    }
}

/// What every read answers over the history, one line each, doubles written exactly.
private func readings(_ store: any Store) throws -> [String] {
    var lines: [String] = []
    func add(_ label: String, _ value: Any) { lines.append("\(label): \(value)") }
    let temperature = try #require(Variables.hourlyVariable(named: "temperature_2m"))
    let precipitation = try #require(Variables.hourlyVariable(named: "precipitation"))
    let t0 = History.t0
    add(
        "tables",
        try store.tableCounts().filter { $0.table != "verification_summaries" }.map { "\($0.table)=\($0.rows)" })
    add("activities", try store.activities().sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" })
    add("api weight", try store.apiWeightUsed(from: t0 - 86400, to: t0 + 86400))
    // Run ids count per location on PostgreSQL and over the file on SQLite: compared from each
    // location's first run.
    add("prunable", try store.prunableRuns(before: t0 + 86400, limit: 10).count)
    add("prunable totals", try store.prunableTotals(before: t0 + 86400))
    for id: Int64 in [1, 2] {
        add("sources \(id)", try store.observationSources(locationID: id))
        let base =
            (try store.runSummaries(locationID: id, model: nil, issuedFrom: .min, issuedTo: .max).map(\.id).min() ?? 1)
            - 1
        add("run count \(id)", try store.runCount(locationID: id, model: nil))
        add("run count gfs \(id)", try store.runCount(locationID: id, model: "gfs_seamless"))
        add("forecast span \(id)", try store.forecastSpan(locationID: id, model: nil))
        add("runs by model \(id)", try store.runCountsByModel(locationID: id))
        add("activity \(id)", try store.activity(locationID: id))
        add("fetched hours \(id)", try store.fetchedHours(locationID: id, since: 0).sorted())
        add("fetch hours \(id)", try store.fetchHours(locationID: id, from: nil, to: nil))
        add("fetch hours cut \(id)", try store.fetchHours(locationID: id, from: t0 + 1, to: t0 + 7 * 3600))
        add(
            "run summaries \(id)",
            try store.runSummaries(locationID: id, model: nil, issuedFrom: .min, issuedTo: .max).map { run in
                var run = run
                run.id -= base
                return "\(run)"
            })
        add(
            "known runs \(id)", try store.knownRunTimes(locationID: id, model: "best_match", from: 0, to: .max).sorted()
        )
        for source in ["Station", "era5", "analysis:gfs_seamless", "nowhere"] {
            add("span \(id) \(source)", try store.observationSpan(locationID: id, source: source))
            add(
                "value \(id) \(source)",
                try store.observedValue(temperature, locationID: id, source: source, time: t0 / 3600 * 3600 + 3600)
                    as Any)
            for model in [nil, "gfs_seamless"] as [String?] {
                add(
                    "persistence \(id) \(source) \(model ?? "-")",
                    try store.persistenceReferences(locationID: id, source: source, observed: temperature, model: model)
                        .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
                add(
                    "source pairs \(id) \(source) \(model ?? "-")",
                    try store.sourcePairs(
                        locationID: id, source: source, forecast: temperature, observed: temperature, from: nil,
                        to: nil, model: model, leadSeconds: 0..<LeadRule.maxSeconds))
                let filter = PairFilter(
                    locationID: id, source: source, from: t0 - 86400, to: t0 + 4 * 86400, model: model)
                for variable in [temperature, precipitation] {
                    var pairs: [String] = []
                    try store.forEachVerificationPair(forecast: variable, observed: variable, filter) {
                        pairs.append("\($0.model.string) \($0.issuedAt) \($0.validTime) \($0.forecast) \($0.observed)")
                    }
                    add("pairs \(id) \(source) \(model ?? "-") \(variable.name)", pairs)
                    var exported: [String] = []
                    try store.forEachExportPair(variable, PairFilter(locationID: id, source: source, model: model)) {
                        exported.append(
                            "\($0.location.string) \($0.model.string) \($0.issuedAt) \($0.validTime) \($0.forecast) \($0.observed)"
                        )
                    }
                    add("export pairs \(id) \(source) \(model ?? "-") \(variable.name)", exported)
                }
            }
            var verif: [String] = []
            try store.forEachVerifPair(temperature, PairFilter(locationID: id, source: source, model: "best_match")) {
                verif.append(
                    "\($0.issuedAt) \($0.validTime) \($0.latitude) \($0.longitude) \($0.altitude as Any) \($0.observed) \($0.forecast)"
                )
            }
            add("verif \(id) \(source)", verif)
            add(
                "trend \(id) \(source)",
                try store.trendPairs(
                    temperature, PairFilter(locationID: id, source: source), model: "best_match", minLead: 0,
                    maxLead: 48 * 3600, targetLead: 24 * 3600
                ).map { "\($0.valid) \($0.run - base) \($0.issued) \($0.forecast) \($0.observed)" })
        }
        for hour: Int64 in [0, 1, 30, 100] {
            let valid = 1_699_833_600 + hour * 3600
            add(
                "forecasts \(id) \(hour)",
                try store.forecasts(of: temperature, locationID: id, validTime: valid, model: nil).map {
                    "\($0.runID - base) \($0.model) \($0.issuedAt) \($0.value as Any)"
                })
            add("pruned covering \(id) \(hour)", try store.prunedRunsCovering(valid, locationID: id, model: nil))
        }
        add("pruned runs \(id)", try store.prunedRuns(validBetween: t0, and: t0 + 86400, locationID: id, model: nil))
        for (from, to) in [(0.0, 24.0), (24.0, 24.0), (12.0, 96.0)] {
            var sequence: [String] = []
            try store.forEachForecastSequence(
                locationID: id, model: "gfs_seamless", variable: "temperature_2m", leadFromHours: from,
                leadToHours: to, from: nil, to: nil
            ) { sequence.append("\($0)") }
            add("sequence \(id) \(from)-\(to)", sequence)
        }
    }
    for filter in [ExportFilter(), ExportFilter(locationID: 1, from: t0, to: t0 + 3 * 86400, model: "best_match")] {
        var hourly: [String] = []
        try store.forEachHourlyForecast(Variables.hourly, filter) {
            hourly.append(
                "\($0.location.string) \($0.model.string) \($0.issuedAt) \($0.fetchedAt) \($0.validTime) \($0.values)")
        }
        add("hourly \(filter)", hourly)
        var daily: [String] = []
        try store.forEachDailyForecast(Variables.daily, filter) {
            daily.append(
                "\($0.location.string) \($0.model.string) \($0.issuedAt) \($0.fetchedAt) \($0.date.string) \($0.values)"
            )
        }
        add("daily \(filter)", daily)
    }
    for filter in [ExportFilter(), ExportFilter(locationID: 2, from: t0, to: t0 + 86400, source: "Station")] {
        var observations: [String] = []
        try store.forEachObservation(Variables.hourly, filter) {
            observations.append("\($0.location.string) \($0.source.string) \($0.time) \($0.values)")
        }
        add("observations \(filter)", observations)
    }
    return lines
}

@Suite(
    "Both engines: every read gives the same answer",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct EngineReadsTests {
    @Test(
        "the same history read through SQLite and through PostgreSQL gives the same rows, in the same order, bit for bit",
        arguments: [nil, "en-US"] as [String?])
    func sameAnswers(icuLocale: String?) throws {
        let sqlite = try #require(try freshStore(.sqlite) as? SQLiteStore)
        let postgres = try #require(try freshStore(.postgres, icuLocale: icuLocale) as? PostgresEngine)
        try History.fill(sqlite: sqlite, postgres: postgres)
        let want = try readings(sqlite)
        let got = try readings(postgres)
        // The history is rich enough to show something: pairs, repeats, three sources.
        #expect(want.contains { $0.hasPrefix("pairs 1 Station - temperature_2m: [\"") })
        #expect(
            want.contains { $0.hasPrefix("sources 1: [\"Station\", \"alpha\", \"era5\", \"analysis:gfs_seamless\"") })
        #expect(want.count == got.count)
        for (a, b) in zip(want, got) where a != b {
            Issue.record("SQLite:     \(a.prefix(600))\nPostgreSQL: \(b.prefix(600))")
        }
    }
}

/// Copies SQLite's kept sums into the PostgreSQL database, row for row.
private func copySums(from sqlite: SQLiteStore, to postgres: PostgresEngine) throws -> Int {
    let keys = [
        "location_id", "model", "source", "variable", "lead_from_h", "lead_to_h", "valid_date", "valid_from",
        "valid_to", "first_valid_time", "last_valid_time"
    ]
    let sums = SummarySums.columns
    let columns = keys + sums.map(\.name)
    let rows = try SQLiteBackdoor(sqlite.path).db.rows(
        "SELECT " + columns.joined(separator: ", ") + " FROM verification_summaries"
    ) { row -> [PostgresValue] in
        var values: [PostgresValue] = [.integer(row.int64(0))]
        values += (1...3).map { .text(row.string($0)) }
        values += [.integer(row.int64(4)), .integer(row.int64(5)), .text(row.string(6))]
        values += (7...10).map { row.optionalInt64($0).map(PostgresValue.integer) ?? .null }
        for (index, column) in sums.enumerated() {
            let value = row.optionalDouble(11 + index)
            values.append(value.map { column.isCount ? .integer(Int64($0)) : .real($0) } ?? .null)
        }
        return values
    }
    let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
    for values in rows {
        try postgres.db.run(
            "INSERT INTO verification_summaries (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", values)
    }
    return rows.count
}

/// What the kept-sum reads answer, one line each.
private func summaryReadings(_ store: any Store) throws -> [String] {
    var lines: [String] = []
    for id: Int64 in [1, 2] {
        let days = try store.summaryDays(locationID: id)
        lines.append("days \(id): \(days)")
        for (source, variable) in Set(days.map { "\($0.source)\u{1}\($0.variable)" }).sorted().map({
            let parts = $0.split(separator: "\u{1}").map(String.init)
            return (parts[0], parts[1])
        }) {
            for model in [nil, "gfs_seamless"] as [String?] {
                lines.append(
                    "totals \(id) \(source) \(variable) \(model ?? "-"): "
                        + "\(try store.summaryTotals(locationID: id, source: source, variable: variable, model: model, from: .min, to: .max))"
                )
                var kept: [String] = []
                try store.forEachSummary(
                    locationID: id, source: source, variable: variable, model: model,
                    cutBy: (History.t0 + 1800, History.t0 + 86400 + 1800)
                ) { kept.append("\($0)") }
                lines.append("cut \(id) \(source) \(variable) \(model ?? "-"): \(kept)")
            }
        }
    }
    lines.append("pending: \(try store.sumsPending())")
    return lines
}

@Suite(
    "Both engines: the kept sums and doctor --deep",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct EngineSumsTests {
    @Test(
        "with SQLite's kept sums copied over, PostgreSQL reads the same totals, verify and trend answer alike, and its doctor --deep recount agrees; a tampered group is named as SQLite names it"
    )
    func keptSumsAndDeepCheck() throws {
        let sqlite = try #require(try freshStore(.sqlite) as? SQLiteStore)
        let postgres = try #require(try freshStore(.postgres) as? PostgresEngine)
        try History.fill(sqlite: sqlite, postgres: postgres)
        let expected = try sqlite.checkSums()
        #expect(expected.checked > 0 && expected.differing.isEmpty)
        // PostgreSQL keeps no sums of its own yet here: every group the pairs make is missing.
        let missing = try postgres.checkSums()
        #expect(missing.differing.count == expected.checked)
        #expect(try copySums(from: sqlite, to: postgres) == expected.checked)
        #expect(try postgres.checkSums() == expected)
        let want = try summaryReadings(sqlite)
        let got = try summaryReadings(postgres)
        #expect(want.contains { $0.hasPrefix("totals 1 Station temperature_2m -: [") && $0.contains("SummaryTotal(") })
        #expect(want.count == got.count)
        for (a, b) in zip(want, got) where a != b {
            Issue.record("SQLite:     \(a.prefix(600))\nPostgreSQL: \(b.prefix(600))")
        }
        // What verify and trend make of the reads, the kept sums' and the pairs' alike.
        let here = try #require(try sqlite.location(named: "Berlin"))
        let there = try #require(try postgres.location(named: "Berlin"))
        for variable in ["temperature_2m", "precipitation"].compactMap(Variables.hourlyVariable(named:)) {
            for grouping in VerifyGrouping.allCases {
                for (source, model, pairsOnly) in [
                    (nil, nil, false), ("era5", nil, false), ("Station", "gfs_seamless", false), (nil, nil, true)
                ] as [(String?, String?, Bool)] {
                    let options = VerifyOptions(
                        variable: variable, source: source, grouping: grouping, model: model, pairsOnly: pairsOnly)
                    let want = try VerifyQuery.verify(sqlite, location: here, options: options)
                    #expect(!want.rows.isEmpty, "\(variable.name) \(grouping) \(source ?? "-")")
                    #expect(
                        try VerifyQuery.verify(postgres, location: there, options: options) == want,
                        "verify \(variable.name) by \(grouping) \(source ?? "-") \(model ?? "-") pairs only: \(pairsOnly)"
                    )
                }
            }
            for every in TrendInterval.allCases {
                let options = TrendOptions(variable: variable, leadHours: 24, every: every)
                #expect(
                    try TrendQuery.trend(postgres, location: there, options: options)
                        == TrendQuery.trend(sqlite, location: here, options: options), "trend \(variable.name) \(every)"
                )
            }
        }
        #expect("\(try VerifyQuery.checkWholeDays(postgres))" == "\(try VerifyQuery.checkWholeDays(sqlite))")
        // compare, consistency, runs and forecast (no Equatable on some results: their descriptions).
        let temperature = try #require(Variables.hourlyVariable(named: "temperature_2m"))
        for method in CompareMethod.allCases {
            let options = CompareOptions(variable: temperature, method: method)
            #expect(
                "\(try Compare.compare(postgres, location: there, options: options))"
                    == "\(try Compare.compare(sqlite, location: here, options: options))", "compare \(method)")
        }
        for byDay in [false, true] {
            #expect(
                "\(try Consistency.consistency(postgres, location: there, variable: temperature, byDay: byDay))"
                    == "\(try Consistency.consistency(sqlite, location: here, variable: temperature, byDay: byDay))")
        }
        let runs = try RunsQuery.runs(sqlite, location: here)
        #expect(runs.count == 4)
        #expect(try RunsQuery.runs(postgres, location: there) == runs)
        for hours: Int64 in [50, 80, 150] {
            let valid = 1_699_833_600 + hours * 3600
            #expect(
                try ForecastHistoryQuery.history(postgres, location: there, validTime: valid, variable: temperature)
                    == ForecastHistoryQuery.history(sqlite, location: here, validTime: valid, variable: temperature))
        }
        // One group's count off by one, in both: both recounts name it alike.
        let tamper =
            "UPDATE verification_summaries SET n = n + 1 WHERE location_id = 1 AND source = 'Station' AND variable = 'temperature_2m' AND model = 'gfs_seamless' AND lead_from_h = 0"
        try SQLiteBackdoor(sqlite.path).db.execute(tamper)
        #expect(try postgres.db.run(tamper) > 0)
        let sqliteFound = try sqlite.checkSums()
        #expect(!sqliteFound.differing.isEmpty)
        #expect(try postgres.checkSums() == sqliteFound)
        // Repairing rewrites the differing groups from the rows, as on SQLite.
        let sqliteRepaired = try sqlite.checkSums(repair: true)
        #expect(sqliteRepaired.repaired == sqliteFound.differing.count)
        #expect(try postgres.checkSums(repair: true) == sqliteRepaired)
        #expect(try postgres.checkSums() == expected)
    }
}
