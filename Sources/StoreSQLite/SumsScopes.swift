import WxCore
import WxSQLite
import WxStore

// The write scopes of the kept sums (verification_summaries current at write time, issue #15; the
// engine-neutral part is in WxStore: KeptSums.swift, PairSummer.swift): which pairs a write touches,
// read before and after it with SQLite's SQL, their difference written by `applySums` (SumsUpsert.swift).

extension SQLiteStore {
    /// Runs `write` with its pairs' sums kept as `scope` says, then restores the scope around it.
    func keeping<T>(_ scope: SumsKeeping, _ write: () throws -> T) rethrows -> T {
        let outer = sumsKeeping
        sumsKeeping = scope
        defer { sumsKeeping = outer }
        return try write()
    }

    /// Whether the write running now keeps its pairs' sums itself.
    var keepsSums: Bool { sumsKeeping.keepsSums }

    /// `keepingSums` of one span's observations (for `storeBatch`).
    package func keepingSpanSums(_ span: ObservationSpan, _ write: () throws -> Void) throws {
        try keepingSums(
            .observations(location: span.location, source: span.source, from: span.from, through: span.through), write)
    }

    /// `keeping` (for `storeBatch`).
    package func keepingScope(_ scope: SumsKeeping, _ write: () throws -> Void) throws { try keeping(scope, write) }

    /// The spans whose pairs' sums an enclosing write keeps (the writes inside leave them out).
    var sumsKeptOutside: [ObservationSpan] { sumsKeeping.keptOutside }

    /// The variables whose pairs are summed (`SummedPairs.variables`).
    public static var summedVariables: [Variable] { SummedPairs.variables }
    /// The threshold (mm) at which the 2x2 and Brier sums are kept (`SummedPairs.threshold`).
    public static var summedThreshold: Double { SummedPairs.threshold }

    /// Runs `write`, keeping the sums of the pairs in `scope` current: subtracted before, added after.
    /// Inside a bulk write that keeps the sums itself (`SumsKeeping.enclosingWrite`) it only runs `write`.
    func keepingSums<T>(_ scope: PairScope, _ write: () throws -> T) throws -> T {
        guard keepsSums else { return try write() }
        var before = SumsDelta()
        try collectSums(scope, into: &before)
        let result = try keepingEnsembleSums(scope, write)
        var after = SumsDelta()
        try collectSums(scope, into: &after)
        try applyChange(from: before, to: after)
        return result
    }

    /// Writes the difference between the sums of some pairs before and after a write.
    func applyChange(from before: SumsDelta, to after: SumsDelta) throws {
        let (delta, shrunk) = SumsDelta.change(from: before, to: after)
        try applySums(delta)
        for key in shrunk { try refreshValidBounds(key) }
    }

    /// Like `keepingSums(.observations(...))`, for a write that changes nothing but the observations
    /// of `span.source` at the location (an observation upsert, a station file). The pairs before and
    /// after such a write share their forecasts, so those are read once, before it: only the span's
    /// observations (and the references they are) are read again after it. An hourly fetch's past
    /// hours pair with ~128 runs each; reading those twice was most of an ingest's CPU.
    func keepingObservationSums<T>(_ span: ObservationSpan, _ write: () throws -> T) throws -> T {
        guard keepsSums else { return try write() }
        let forecasts = try spanForecasts(span)
        let referencing = try referencingPairs(span)
        var summer = try pairSummer(locationID: span.location)
        func sums() throws -> SumsDelta {
            var delta = SumsDelta()
            try forecasts.pair(with: observations(in: span), source: span.source, into: &summer)
            try referencing.add(into: &summer)
            summer.flush(into: &delta)
            return delta
        }
        let before = try sums()
        let result = try keepingEnsembleSums(
            .observations(location: span.location, source: span.source, from: span.from, through: span.through), write)
        // The write changes only the references of runs issued in [from, through + 1 h): the
        // others are kept from the first pass, not looked up again.
        summer.references = summer.references.filter { key, _ in
            !span.isReferenced(source: key.source, issuedAt: key.issuedAt)
        }
        try applyChange(from: before, to: try sums())
        return result
    }

    /// One source's observations of a location in the span, by hour: `Variables.hourly` values each,
    /// NaN for NULL (SQLite stores no NaN).
    func observations(in span: ObservationSpan) throws -> [Int64: [Double]] {
        let statement = try db.cachedStatement(Self.spanObservationsSQL)
        try statement.bind([.integer(span.location), .text(span.source), .integer(span.from), .integer(span.through)])
        defer { statement.reset() }
        var values: [Int64: [Double]] = [:]
        while let row = try statement.step() {
            values[row.int64(0)] = (0..<PairSummer.count).map { row.optionalDouble(1 + $0) ?? .nan }
        }
        return values
    }

    static let spanObservationsSQL =
        "SELECT time, " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM observations WHERE location_id = ?1 AND time BETWEEN ?3 AND ?4 AND source = ?2"
    static let referencingSQL =
        "SELECT " + SQLiteStore.pairColumns + """
             FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued
            CROSS JOIN hourly_forecasts h ON h.run_id = r.id AND h.valid_time <= ?5
            CROSS JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time AND o.source = ?2
            WHERE r.location_id = ?1 AND r.issued_at >= ?3 AND r.issued_at < ?4 + 3600
              AND NOT (h.valid_time BETWEEN ?3 AND ?4) AND
            """ + " " + SQLiteStore.pairLead

    /// The pairs of the source of the runs issued in `[from, through + 1 h)` at hours outside the
    /// span, up to the source's latest observation: the span's observations are their persistence
    /// reference, so their sums change with it.
    func referencingPairs(_ span: ObservationSpan) throws -> PairRows {
        let latest = try latestObservation(location: span.location, source: span.source) ?? .min
        let referencing = try db.cachedStatement(Self.referencingSQL)
        try referencing.bind([
            .integer(span.location), .text(span.source), .integer(span.from), .integer(span.through), .integer(latest)
        ])
        defer { referencing.reset() }
        var rows = PairRows()
        while let row = try referencing.step() { rows.append(StoredRow(row)) }
        return rows
    }

    /// Adds the sums of pairs that did not exist before (a new run's, a continued run's new hours).
    func addSums(_ scope: PairScope) throws {
        guard keepsSums else { return }
        var delta = SumsDelta()
        try collectSums(scope, into: &delta)
        try applySums(delta)
    }

    static let pairColumns =
        "r.location_id, r.model, o.source, r.issued_at, h.valid_time, "
        + Variables.hourlyNames.map { "h.\($0)" }.joined(separator: ", ") + ", "
        + Variables.hourlyNames.map { "o.\($0)" }.joined(separator: ", ")
    /// 0 ≤ lead < 384 h (`LeadRule`). Written on the difference, as the pairs view does: a plain
    /// `h.valid_time >= r.issued_at` lets SQLite carry the bound over to `o.time` and range-scan the
    /// observations from the issue time on for every hour instead of seeking the one it pairs with.
    static let pairLead = "h.valid_time - r.issued_at >= 0 AND h.valid_time - r.issued_at < \(LeadRule.maxSeconds)"

    /// Adds the sums of every pair in `scope` as the database holds them now.
    func collectSums(_ scope: PairScope, into delta: inout SumsDelta) throws {
        switch scope {
        case .run(let id, let validTimes):
            guard let location = try db.scalarInt("SELECT location_id FROM forecast_runs WHERE id = ?", [.integer(id)])
            else { return }
            // Only hours up to the latest observation can pair: a run's later hours (most of a
            // new one's 384) are not read.
            guard let latest = try latestObservation(location: location, source: nil) else { return }
            let statement = try db.cachedStatement(
                "SELECT " + Self.pairColumns + """
                     FROM forecast_runs r CROSS JOIN hourly_forecasts h ON h.run_id = r.id AND h.valid_time <= ?2
                    CROSS JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time
                    WHERE r.id = ?1 AND
                    """ + " " + Self.pairLead)
            try statement.bind([.integer(id), .integer(latest)])
            defer { statement.reset() }
            var summer = try pairSummer(locationID: location)
            while let row = try statement.step() {
                if let validTimes, !validTimes.contains(row.int64(4)) { continue }
                try summer.add(StoredRow(row))
            }
            summer.flush(into: &delta)
        case .observations(let location, let source, let from, let through):
            var summer = try pairSummer(locationID: location)
            // The observations' own hours, from each to the runs that forecast it (one seek per run).
            let atHours = try db.cachedStatement(
                "SELECT " + Self.pairColumns + """
                     FROM observations o
                    CROSS JOIN forecast_runs r INDEXED BY forecast_runs_by_location_issued
                        ON r.location_id = o.location_id AND r.issued_at <= o.time AND r.issued_at > o.time - ?5
                    CROSS JOIN hourly_forecasts h ON h.run_id = r.id AND h.valid_time = o.time
                    WHERE o.location_id = ?1 AND o.source = ?2 AND o.time BETWEEN ?3 AND ?4
                    """)
            try atHours.bind([
                .integer(location), .text(source), .integer(from), .integer(through), .integer(LeadRule.maxSeconds)
            ])
            defer { atHours.reset() }
            while let row = try atHours.step() { try summer.add(StoredRow(row)) }
            // The runs whose persistence reference these observations may be: their other pairs,
            // at hours up to the source's latest observation (the others have none to pair with).
            try referencingPairs(ObservationSpan(location: location, source: source, from: from, through: through))
                .add(into: &summer)
            summer.flush(into: &delta)
        case .location(let location):
            try sumPairs(ofLocation: location, into: &delta)
        }
    }

    /// The time of the location's latest observation (of `source`, or of any), if it has one.
    func latestObservation(location: Int64, source: String?) throws -> Int64? {
        // Backwards along the primary key (location_id, time, source) to the first row of the source.
        let statement = try db.cachedStatement(
            "SELECT time FROM observations WHERE location_id = ?1 AND (?2 IS NULL OR source = ?2) ORDER BY time DESC LIMIT 1"
        )
        try statement.bind([.integer(location), source.sqlValue])
        defer { statement.reset() }
        return try statement.step()?.int64(0)
    }

    /// Adds the sums of every pair of a location (every run, every source) to `delta`; with `apply`,
    /// hands it over each time it holds about 20,000 groups (so memory stays bounded) and starts anew.
    func sumPairs(
        ofLocation location: Int64, into delta: inout SumsDelta, apply: ((SumsDelta) throws -> Void)? = nil
    ) throws {
        var summer = try pairSummer(locationID: location)
        let statement = try db.cachedStatement(
            "SELECT " + Self.pairColumns + """
                 FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued
                CROSS JOIN hourly_forecasts h ON h.run_id = r.id
                CROSS JOIN observations o ON o.location_id = r.location_id AND o.time = h.valid_time
                WHERE r.location_id = ?1 AND
                """ + " " + Self.pairLead)
        try statement.bind([.integer(location)])
        defer { statement.reset() }
        while let row = try statement.step() {
            try summer.add(StoredRow(row))
            if let apply, summer.pendingGroups >= 20_000 {
                summer.flush(into: &delta)
                try apply(delta)
                delta = SumsDelta()
            }
        }
        summer.flush(into: &delta)
    }

    /// A summer for the pairs of a location: its zone's days, the spans an enclosing write keeps
    /// left out, persistence references read with `referenceSQL`.
    func pairSummer(locationID: Int64) throws -> PairSummer {
        let timezone = try db.scalarText("SELECT timezone FROM locations WHERE id = ?", [.integer(locationID)]) ?? "UTC"
        return PairSummer(timezone: timezone, keptOutside: sumsKeptOutside) { location, source, issued in
            try self.persistenceReference(location: location, source: source, issuedAt: issued)
        }
    }

    static let referenceSQL =
        "SELECT " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM observations WHERE location_id = ? AND source = ? AND time <= ? AND time > ? ORDER BY time DESC"

    /// The persistence reference of each column at an issue time (`PersistenceReference`).
    func persistenceReference(location: Int64, source: String, issuedAt: Int64) throws -> [Double?] {
        let statement = try db.cachedStatement(Self.referenceSQL)
        try statement.bind([
            .integer(location), .text(source), .integer(issuedAt), .integer(issuedAt - PersistenceReference.window)
        ])
        defer { statement.reset() }
        var reference = PersistenceReference()
        while let row = try statement.step() {
            if reference.takeOlder({ row.optionalDouble($0) }) { break }
        }
        return reference.values
    }

    /// Every run with a lead of 0 ..< 384 h at some hour of the span (as `pairLead`), and its
    /// hours in the span: one seek into each run's rows, done by SQLite in one statement.
    static let spanForecastsSQL =
        "SELECT r.model, r.issued_at, h.valid_time, " + Variables.hourlyNames.map { "h." + $0 }.joined(separator: ", ")
        + " FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued"
        + " CROSS JOIN hourly_forecasts h ON h.run_id = r.id"
        + " AND h.valid_time BETWEEN max(?2, r.issued_at) AND min(?3, r.issued_at + ?4 - 1)"
        + " WHERE r.location_id = ?1 AND r.issued_at > ?2 - ?4 AND r.issued_at <= ?3"

    /// The forecasts of every run at the hours of `span` (each run's hours read in one range of the
    /// hourly table's key).
    func spanForecasts(_ span: ObservationSpan) throws -> SpanForecasts {
        var forecasts = SpanForecasts(location: span.location)
        let statement = try db.cachedStatement(Self.spanForecastsSQL)
        try statement.bind([
            .integer(span.location), .integer(span.from), .integer(span.through), .integer(LeadRule.maxSeconds)
        ])
        defer { statement.reset() }
        var lastModel = -1
        while let row = try statement.step() {
            let index: Int
            if lastModel >= 0, row.withUTF8(0, { $0.elementsEqual(forecasts.models[lastModel].utf8) }) {
                index = lastModel
            } else {
                let model = row.string(0)
                index = forecasts.models.firstIndex(of: model) ?? forecasts.models.count
                if index == forecasts.models.count { forecasts.models.append(model) }
                lastModel = index
            }
            forecasts.rows.append((index, row.int64(1), row.int64(2)))
            for column in 0..<PairSummer.count { forecasts.values.append(row.optionalDouble(3 + column) ?? .nan) }
        }
        return forecasts
    }
}

extension PairSummer {
    /// Adds one pair row's sums (`SQLiteStore.pairColumns`), every scored variable that has both values.
    mutating func add(_ row: StoredRow) throws {
        try add(
            location: row.int64(0), model: nameIndex(row.string(1)), source: nameIndex(row.string(2)),
            issued: row.int64(3), valid: row.int64(4)
        ) { row.optionalDouble(5 + $0) }
    }
}

extension PairRows {
    /// Adds one pair row (`SQLiteStore.pairColumns`).
    mutating func append(_ row: StoredRow) {
        keys.append((row.int64(0), row.string(1), row.string(2), row.int64(3), row.int64(4)))
        for index in 0..<Self.width { values.append(row.optionalDouble(5 + index) ?? .nan) }
    }
}
