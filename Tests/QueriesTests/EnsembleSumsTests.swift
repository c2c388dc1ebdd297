import Foundation
import TestSupport
import Testing
import WxCore
import WxStore

@testable import WxPostgresStore
@testable import WxQueries
@testable import WxSQLite
@testable import WxStoreSQLite

/// A history where the kept ensemble sums can go wrong: ties (values on a 0.5 grid, the observation
/// often equal to members), missing members, runs stored before and after their observations, two
/// sources, observations replaced, a station file, and a time zone with a clock change.
struct EnsembleHistory {
    let folder: URL
    let store: any Store & EnsembleStore
    /// The same store as SQLite's, for the checks that read its file (nil on PostgreSQL).
    let sqlite: SQLiteStore?
    let location: Location
    /// The PostgreSQL database's connection string (nil on SQLite).
    let conninfo: String?
    static let start: Int64 = 1_792_281_600  // 2026-10-18T00:00Z, a week before Europe/Zurich's clocks go back
    static let model = "icon_d2_eps"
    let temperature = Variables.hourlyVariable(named: "temperature_2m")!
    let precipitation = Variables.hourlyVariable(named: "precipitation")!

    init(_ name: String, engine: StoreEngine = .sqlite) throws {
        folder = Scratch.folder(name)
        switch engine {
        case .sqlite:
            sqlite = try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path)
            store = sqlite!
            conninfo = nil
        case .postgres:
            sqlite = nil
            let database = try engine.freshDatabase(name)
            conninfo = database
            store = try PostgresEngine(conninfo: database, now: 0)
        }
        location = try store.addLocation(
            name: "Bern", latitude: 46.95, longitude: 7.45, elevation: nil, timezone: "Europe/Zurich",
            models: [Self.model], now: 0)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    static func truth(_ time: Int64) -> (temperature: Double, rain: Double) {
        let h = Double((time - start) / 3600)
        return (((12 + 4 * sin(h / 7)) * 2).rounded() / 2, max(0, ((sin(h / 5) * 3).rounded() / 2)))
    }

    func observe(_ time: Int64, source: String, shift: Double = 0, replacing: Bool = false) throws {
        var values = [Double?](repeating: nil, count: Variables.hourly.count)
        let truth = Self.truth(time)
        values[Variables.hourly.firstIndex(of: temperature)!] = truth.temperature + shift
        values[Variables.hourly.firstIndex(of: precipitation)!] = truth.rain
        try store.upsertObservation(
            locationID: location.id, source: source, time: time, values: values, recordedAt: time + 60,
            replacing: replacing)
    }

    /// Twenty-member runs, 6 hours apart, 48 hours each; member 4 missing every 7th hour, member 9
    /// missing in run 3 altogether.
    func storeRun(_ run: Int, random: inout GaussianRandom) throws {
        let (forecast, issued) = makeRun(run, random: &random)
        _ = try store.storeEnsemble(
            forecast, grid: (46.95, 7.45, nil), for: location, issuedAt: issued, fetchedAt: issued + 3600)
    }

    /// Run `run`'s forecast and issue time (see `storeRun`).
    func makeRun(_ run: Int, random: inout GaussianRandom) -> (EnsembleForecast, Int64) {
        let issued = Self.start + Int64(run) * 6 * 3600
        let times = (-6..<48).map { issued + Int64($0) * 3600 }
        var values: [[[Double]]?] = Array(repeating: nil, count: EnsembleModels.variables.count)
        var temperatures = [[Double]](repeating: [], count: 20)
        var rain = [[Double]](repeating: [], count: 20)
        for (h, time) in times.enumerated() {
            let truth = Self.truth(time)
            for m in 0..<20 {
                let missing = (m == 4 && h % 7 == 0) || (m == 9 && run == 3)
                temperatures[m].append(missing ? .nan : ((truth.temperature + 1.5 * random.next()) * 2).rounded() / 2)
                rain[m].append(missing ? .nan : max(0, ((truth.rain + random.next()) * 2).rounded() / 2))
            }
        }
        values[EnsembleModels.variables.firstIndex(of: temperature)!] = temperatures
        values[EnsembleModels.variables.firstIndex(of: precipitation)!] = rain
        return (EnsembleForecast(model: Self.model, hourlyTimes: times, values: values), issued)
    }

    /// Builds the history: observations before some runs and after others, then replaced.
    func build() throws {
        var random = GaussianRandom(seed: 31)
        // Station observations of the first three days, before any run.
        for hour in 0..<72 { try observe(Self.start + Int64(hour) * 3600, source: "station") }
        for run in 0..<16 { try storeRun(run, random: &random) }
        // Later observations pair with the stored members; a second source as a series.
        for hour in 72..<(6 * 24) { try observe(Self.start + Int64(hour) * 3600, source: "station") }
        let hours = (0..<(5 * 24)).map { Self.start + Int64($0) * 3600 }
        var series = [[Double?]?](repeating: nil, count: Variables.hourly.count)
        series[Variables.hourly.firstIndex(of: temperature)!] = hours.map { Self.truth($0).temperature + 0.5 }
        var reanalysis = ModelForecast(model: "era5")
        reanalysis.hourlyTimes = hours
        reanalysis.hourly = series
        try store.saveObservations(reanalysis, locationID: location.id, source: "era5", recordedAt: Self.start)
        // Corrections: replaced values, and a station file over a day.
        for hour in stride(from: 10, to: 100, by: 9) {
            try observe(Self.start + Int64(hour) * 3600, source: "station", shift: 1.5, replacing: true)
        }
        var csv = "time,temperature_2m\n"
        for hour in 30..<54 {
            let time = Self.start + Int64(hour) * 3600
            csv += "\(UTCTime.format(time)),\(Self.truth(time).temperature - 0.5)\n"
        }
        let file = try StationCSV.parse(Data(csv.utf8), timezone: nil, skipBadRows: false)
        #expect(file.rows.count == 24)
        _ = try store.importObservations(file, locationID: location.id, source: "station", recordedAt: Self.start)
        // One more run after everything: its cases pair at store time.
        try storeRun(16, random: &random)
    }

    func kept(_ variable: Variable, source: String, from: Int64 = .min, to: Int64 = .max, thresholds: [Double] = [])
        throws -> EnsembleVerification
    {
        try EnsembleVerify.run(
            store: store, location: location, model: Self.model, variable: variable, source: source, from: from,
            to: to, thresholds: thresholds)
    }

    /// Every kept group of `variable` and `source`, by day and lead.
    func keptGroups(_ variable: Variable, source: String) throws -> [EnsembleDayGroup] {
        try store.ensembleGroups(
            locationID: location.id, model: Self.model, variable: variable.name, source: source, from: .min, to: .max)
            ?? []
    }

    func members(_ variable: Variable, source: String, from: Int64 = .min, to: Int64 = .max, thresholds: [Double] = [])
        throws -> EnsembleVerification
    {
        try EnsembleVerify.fromMembers(
            store: store, location: location, model: Self.model, variable: variable, source: source, from: from,
            to: to, thresholds: thresholds)
    }
}

/// Every score of two accumulators, to 1e-9 (counts exactly).
func expectSame(_ a: EnsembleScores, _ b: EnsembleScores, _ what: String) {
    #expect(a.n == b.n && a.nSpread == b.nSpread && a.sumMembers == b.sumMembers, "\(what): counts")
    #expect(a.rankLeftOut == b.rankLeftOut, "\(what): rank cases left out")
    let pairs: [(String, Double?, Double?)] = [
        ("crps", a.crps, b.crps), ("fair", a.fairCRPS, b.fairCRPS), ("under", a.crpsUnderforecast, b.crpsUnderforecast),
        ("over", a.crpsOverforecast, b.crpsOverforecast), ("spread term", a.crpsSpread, b.crpsSpread),
        ("bias", a.meanBias, b.meanBias), ("mae", a.meanMAE, b.meanMAE), ("rmse", a.meanRMSE, b.meanRMSE),
        ("spread", a.spread, b.spread), ("ssr", a.spreadSkillRatio, b.spreadSkillRatio)
    ]
    for (name, x, y) in pairs {
        #expect((x == nil) == (y == nil), "\(what): \(name) defined")
        if let x, let y { #expect(abs(x - y) < 1e-9, "\(what): \(name) \(x) vs \(y)") }
    }
    let bins = max(a.rankCounts.count, b.rankCounts.count)
    for bin in 0..<bins {
        let x = bin < a.rankCounts.count ? a.rankCounts[bin] : 0
        let y = bin < b.rankCounts.count ? b.rankCounts[bin] : 0
        #expect(abs(x - y) < 1e-9, "\(what): rank bin \(bin)")
    }
}

func expectSame(_ a: EnsembleVerification, _ b: EnsembleVerification, _ what: String) {
    #expect(a.byLead.map(\.bucket) == b.byLead.map(\.bucket), "\(what): buckets")
    for (x, y) in zip(a.byLead, b.byLead) { expectSame(x.scores, y.scores, "\(what) \(x.bucket)") }
    expectSame(a.total, b.total, "\(what) all")
    #expect(a.events.count == b.events.count)
    for (x, y) in zip(a.events, b.events) {
        #expect(x.n == y.n && x.binCases == y.binCases && x.binEvents == y.binEvents, "\(what) ≥ \(x.threshold)")
        #expect(abs((x.fairBrier ?? 0) - (y.fairBrier ?? 0)) < 1e-9, "\(what) fair Brier ≥ \(x.threshold)")
        for (p, q) in zip(x.binForecastSum, y.binForecastSum) { #expect(abs(p - q) < 1e-9) }
    }
}

@Suite("Ensemble sums kept at write time")
struct EnsembleSumsTests {
    @Test(
        "sums read back equal the scores from every member, through ties, gaps, late and replaced observations",
        arguments: StoreEngine.all)
    func keptEqualsMembers(engine: StoreEngine) throws {
        let history = try EnsembleHistory("ensemble-sums", engine: engine)
        defer { history.remove() }
        try history.build()
        #expect(try !history.keptGroups(history.temperature, source: "station").isEmpty)
        let cases: [(Variable, String, [Double])] = [
            (history.temperature, "station", []), (history.temperature, "era5", []),
            (history.precipitation, "station", [0.1, 1, 5, 2])
        ]
        for (variable, source, thresholds) in cases {
            let members = try history.members(variable, source: source, thresholds: thresholds)
            #expect(members.total.n > 500 && members.total.rankLeftOut > 0)
            expectSame(
                try history.kept(variable, source: source, thresholds: thresholds), members,
                "\(variable.name) \(source)")
        }
        // A window that cuts days: the cut days from members, the whole ones from the sums.
        let from = EnsembleHistory.start + 30 * 3600 + 1800
        let to = EnsembleHistory.start + 100 * 3600
        expectSame(
            try history.kept(history.temperature, source: "station", from: from, to: to),
            try history.members(history.temperature, source: "station", from: from, to: to), "window")
        // A time zone change moves the cases to the new zone's days; the scores stay.
        try history.store.updateLocation(named: "Bern", timezone: "America/New_York", models: nil)
        let moved = try #require(try history.store.location(named: "Bern"))
        let after = try EnsembleVerify.run(
            store: history.store, location: moved, model: EnsembleHistory.model, variable: history.temperature,
            source: "station")
        expectSame(after, try history.members(history.temperature, source: "station"), "new zone")
        let days = try EnsembleVerify.daily(
            store: history.store, location: moved, model: EnsembleHistory.model, variable: history.temperature,
            source: "station"
        ).days
        let zones = try #require(days).map { ZoneTime.date(of: $0.dayStart, timezone: "America/New_York") }
        #expect(zones.allSatisfy { !$0.isEmpty })
        #expect(
            try #require(days).allSatisfy {
                ZoneTime.span(
                    ofDate: ZoneTime.date(of: $0.dayStart, timezone: "America/New_York"), timezone: "America/New_York")?
                    .start == $0.dayStart
            })
    }

    @Test(
        "an observation between two of a run's hours (a current block at :15) is no case of it: the kept sums stay as the members'",
        arguments: StoreEngine.all)
    func offTheHour(engine: StoreEngine) throws {
        let history = try EnsembleHistory("ensemble-off-hour", engine: engine)
        defer { history.remove() }
        var random = GaussianRandom(seed: 7)
        for hour in 0..<24 { try history.observe(EnsembleHistory.start + Int64(hour) * 3600, source: "current") }
        try history.storeRun(0, random: &random)
        func kept() throws -> [[Double]] {
            try history.keptGroups(history.temperature, source: "current").map {
                [Double($0.dayStart), Double($0.bucket.from)] + $0.sums.columns
            }
        }
        let before = try kept()
        #expect(!before.isEmpty)
        // 28 h 15 min after the issue time: inside the run's 24–48 h bucket, on none of its hours.
        try history.observe(EnsembleHistory.start + 28 * 3600 + 900, source: "current")
        #expect(try kept() == before)
        let audited = try #require(history.store as? any EnsembleSumsAuditable).checkEnsembleSums()
        #expect(audited.differing.isEmpty && audited.checked > 0, "\(audited)")
    }

    @Test("prune deletes old runs' members and keeps their scores", arguments: StoreEngine.all)
    func pruneKeepsScores(engine: StoreEngine) throws {
        let history = try EnsembleHistory("ensemble-prune", engine: engine)
        defer { history.remove() }
        try history.build()
        let before = try history.kept(history.temperature, source: "station")
        let rain = try history.kept(history.precipitation, source: "station", thresholds: [0.1, 1])
        let now = EnsembleHistory.start + 20 * 86400
        #expect(try Pruner.plan(history.store, keepDays: 16, now: now).ensembleRuns == 16)
        let result = try Pruner.prune(history.store, keepDays: 16, now: now)
        #expect(result.ensembleRuns == 16)
        // The runs stay listed (a repeat of the same content is no new run); their members are gone.
        let runs = try history.store.ensembleRuns(locationID: history.location.id, model: EnsembleHistory.model)
        #expect(runs.count == 17)
        let withMembers = try runs.filter {
            try history.store.ensembleMembers(locationID: $0.locationID, runID: $0.id, variable: "temperature_2m")
                != nil
        }
        #expect(withMembers.map(\.id) == [runs.last!.id])
        #expect(try history.members(history.temperature, source: "station").total.n < before.total.n)
        expectSame(try history.kept(history.temperature, source: "station"), before, "pruned")
        expectSame(
            try history.kept(history.precipitation, source: "station", thresholds: [0.1, 1]), rain, "pruned rain")
        // A later observation of the pruned runs' hours changes only the cases whose members are left.
        try history.observe(EnsembleHistory.start + 40 * 3600, source: "station", shift: 3, replacing: true)
        expectSame(try history.kept(history.temperature, source: "station"), before, "pruned, re-observed")
    }

    @Test(
        "the same writes keep the same ensemble sums, bit for bit, on PostgreSQL as on SQLite",
        .enabled(if: StoreEngine.all.contains(.postgres)))
    func sameSumsOnBothEngines() throws {
        let sqlite = try EnsembleHistory("ensemble-same-sqlite", engine: .sqlite)
        let postgres = try EnsembleHistory("ensemble-same-postgres", engine: .postgres)
        defer {
            sqlite.remove()
            postgres.remove()
        }
        func compare(_ what: String) throws {
            for (variable, source) in [
                (sqlite.temperature, "station"), (sqlite.temperature, "era5"), (sqlite.precipitation, "station")
            ] {
                let a = try sqlite.keptGroups(variable, source: source)
                let b = try postgres.keptGroups(variable, source: source)
                #expect(!a.isEmpty, "\(what) \(variable.name) \(source)")
                #expect(a.count == b.count, "\(what) \(variable.name) \(source)")
                for (x, y) in zip(a, b) {
                    // Equal as stored: every count, every sum's bits, the rank and event bytes.
                    #expect(x.dayStart == y.dayStart && x.dayEnd == y.dayEnd && x.bucket == y.bucket)
                    #expect(x.sums.columns.map(\.bitPattern) == y.sums.columns.map(\.bitPattern), "\(what)")
                    #expect(x.sums.rankBytes == y.sums.rankBytes && x.sums.eventBytes == y.sums.eventBytes)
                }
            }
        }
        for history in [sqlite, postgres] { try history.build() }
        try compare("built")
        for history in [sqlite, postgres] {
            _ = try history.store.updateLocation(named: "Bern", timezone: "America/New_York", models: nil)
        }
        try compare("after a zone change")
        for history in [sqlite, postgres] {
            _ = try Pruner.prune(history.store, keepDays: 16, now: EnsembleHistory.start + 20 * 86400)
            try history.observe(EnsembleHistory.start + 120 * 3600, source: "station", shift: 2, replacing: true)
        }
        try compare("after prune and a re-observation")
        // The members read back alike too (the packed bytes are the same on both engines).
        let a = try sqlite.store.ensembleRuns(locationID: sqlite.location.id, model: EnsembleHistory.model)
        let b = try postgres.store.ensembleRuns(locationID: postgres.location.id, model: EnsembleHistory.model)
        #expect(a.map(\.issuedAt) == b.map(\.issuedAt))
        let last = try #require(a.last)
        let lastB = try #require(b.last)
        let x = try #require(
            try sqlite.store.ensembleMembers(locationID: last.locationID, runID: last.id, variable: "precipitation"))
        let y = try #require(
            try postgres.store.ensembleMembers(locationID: lastB.locationID, runID: lastB.id, variable: "precipitation")
        )
        #expect(x.map { $0.map(\.bitPattern) } == y.map { $0.map(\.bitPattern) })
    }

    @Test(
        "four connections storing the same ensemble run at once on PostgreSQL: one run, one set of sums",
        .enabled(if: StoreEngine.all.contains(.postgres)))
    func concurrentStores() throws {
        let history = try EnsembleHistory("ensemble-concurrent", engine: .postgres)
        defer { history.remove() }
        var random = GaussianRandom(seed: 7)
        for hour in 0..<72 { try history.observe(EnsembleHistory.start + Int64(hour) * 3600, source: "station") }
        let (forecast, issued) = history.makeRun(1, random: &random)
        let conninfo = try #require(history.conninfo)
        let location = history.location
        final class Outcomes: @unchecked Sendable {
            let lock = NSLock()
            var values: [Result<EnsembleStoreOutcome, any Error>] = []
            func add(_ value: Result<EnsembleStoreOutcome, any Error>) { lock.withLock { values.append(value) } }
        }
        let outcomes = Outcomes()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            outcomes.add(
                Result {
                    let engine = try PostgresEngine(conninfo: conninfo, now: 0)
                    return try engine.storeEnsemble(
                        forecast, grid: (46.95, 7.45, nil), for: location, issuedAt: issued, fetchedAt: issued + 3600)
                })
        }
        let results = try outcomes.values.map { try $0.get() }
        #expect(results.filter { if case .stored = $0 { true } else { false } }.count == 1, "\(results)")
        #expect(Set(results.map(\.runID)).count == 1)
        #expect(try history.store.ensembleRuns(locationID: location.id, model: EnsembleHistory.model).count == 1)
        // The sums hold the run's cases once: equal to scoring its members.
        expectSame(
            try history.kept(history.temperature, source: "station"),
            try history.members(history.temperature, source: "station"), "stored once")
    }

    @Test("a database from before migration 0015 gets the sums of its stored runs when opened")
    func filledAtOpen() throws {
        let history = try EnsembleHistory("ensemble-fill")
        defer { history.remove() }
        try history.build()
        try history.sqlite!.db.execute("DELETE FROM ensemble_summaries")
        try history.sqlite!.db.execute("INSERT INTO ensemble_sums_pending (id) VALUES (1)")
        // While pending, verify scores from the members.
        let pending = try history.kept(history.temperature, source: "station")
        expectSame(pending, try history.members(history.temperature, source: "station"), "pending")
        let reopened = try SQLiteStore.open(path: history.folder.appendingPathComponent("wxdb.sqlite").path)
        #expect(try reopened.db.scalarInt("SELECT count(*) FROM ensemble_sums_pending") == 0)
        #expect(try reopened.db.scalarInt("SELECT count(*) FROM ensemble_summaries") ?? 0 > 0)
        let kept = try EnsembleVerify.daily(
            store: reopened, location: history.location, model: EnsembleHistory.model,
            variable: history.temperature, source: "station")
        #expect(kept.days != nil)
        expectSame(kept.verification, pending, "filled")
    }
}
