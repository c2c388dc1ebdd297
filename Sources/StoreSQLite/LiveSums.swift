import WxCore
import WxSQLite
import WxStore

// verification_summaries kept current at write time (issue #15).
//
// Why this shape:
// - One row per (location, model, source, variable, lead bucket, local valid day): the buckets are
//   `LeadBuckets` (what `query verify --by lead|model` shows; `--by day` merges them), the day is the
//   location's, so `--from/--to` given as dates select whole rows. Per lead hour x day would be as
//   many rows as pairs for a location-year: no faster than reading the pairs.
// - Every write that can create, change or remove pairs says which pairs it touches (a `PairScope`):
//   their sums are subtracted before the write and added after it, in the same transaction. That
//   one rule covers a new run, a run continued through a moved window (its new hours only), an
//   older copy that moves a run's issue time, a later or corrected observation, a better source, a
//   station file that clears values, and a time zone change; it never needs the pairs of pruned runs,
//   whose rows are gone but whose sums stay. Prune only deletes rows.
// - Sums are in stored (metric) units at the default threshold (0.1 mm), as prune kept them; imperial
//   is an affine change applied when reading. Plain doubles are enough: subtracting what was added
//   leaves an error of a few ulps of the group's sums (the proof test checks 1e-9 against the pairs).

/// Which pairs a write touches.
enum PairScope {
    /// Every pair of one run (every source), or only those at `validTimes`.
    case run(Int64, validTimes: Set<Int64>?)
    /// The pairs of one source's observations valid in `[from, through]` (every run), and every pair
    /// of that source of the runs issued in `[from, through + 1 h)`, whose persistence reference
    /// those observations may be.
    case observations(location: Int64, source: String, from: Int64, through: Int64)
    /// Every pair of one location.
    case location(Int64)
}

/// One source's observations of a location valid in `[from, through]`: the hours of a
/// `PairScope.observations`.
struct ObservationSpan {
    var location: Int64
    var source: String
    var from: Int64
    var through: Int64

    /// Whether a pair is in the span's `PairScope.observations`: at one of its hours, or of a run
    /// issued in `[from, through + 1 h)` (whose persistence reference its observations may be).
    func contains(location: Int64, source: String, issuedAt: Int64, validTime: Int64) -> Bool {
        location == self.location && source == self.source
            && (from...through ~= validTime || (issuedAt >= from && issuedAt < through + 3600))
    }

    /// Whether the span covers another of the same location and source.
    func covers(location: Int64, source: String, from: Int64, through: Int64) -> Bool {
        location == self.location && source == self.source && from >= self.from && through <= self.through
    }
}

/// Sums to add to `verification_summaries`, with the valid hours their pairs span.
struct SumsDelta {
    struct Group {
        var sums = SummarySums()
        var firstValid: Int64?
        var lastValid: Int64?
    }
    var groups: [SummaryKey: Group] = [:]
    var removes = false

    /// Adds `other` with its sign flipped (what a write takes away).
    mutating func subtract(_ other: SumsDelta) {
        for (key, group) in other.groups {
            let negated = SummarySums(values: group.sums.values.map { $0.map { -$0 } })
            groups[key, default: Group()].sums.merge(negated)
            removes = true
        }
    }
}

/// Who keeps the sums of the pairs a write changes: the write itself, or a bulk write around it
/// that keeps them for its whole scope (once, instead of once per row or response it writes).
enum SumsKeeping {
    /// Every write keeps the sums of the pairs it changes (outside any bulk write).
    case eachWrite
    /// The enclosing write keeps every pair's sums itself: the writes inside it keep none.
    case enclosingWrite
    /// The enclosing write keeps the sums of the pairs of these spans' observations; the writes
    /// inside it keep the others' and leave these out.
    case enclosingWriteKeeps([ObservationSpan])
}

extension SQLiteStore {
    /// Runs `write` with its pairs' sums kept as `scope` says, then restores the scope around it.
    func keeping<T>(_ scope: SumsKeeping, _ write: () throws -> T) rethrows -> T {
        let outer = sumsKeeping
        sumsKeeping = scope
        defer { sumsKeeping = outer }
        return try write()
    }

    /// Whether the write running now keeps its pairs' sums itself.
    var keepsSums: Bool {
        if case .enclosingWrite = sumsKeeping { return false }
        return true
    }

    /// The spans whose pairs' sums an enclosing write keeps (the writes inside leave them out).
    var sumsKeptOutside: [ObservationSpan] {
        if case .enclosingWriteKeeps(let spans) = sumsKeeping { return spans }
        return []
    }

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
        var delta = after
        // Groups that lost pairs (or their first or last hour): their first and last valid hour are
        // looked up again once the sums are written.
        let shrunk = before.groups.filter { key, old in
            guard let new = delta.groups[key] else { return true }
            return new.sums.continuous.n < old.sums.continuous.n || (new.firstValid ?? .max) > (old.firstValid ?? .max)
                || (new.lastValid ?? .min) < (old.lastValid ?? .min)
        }.keys
        delta.subtract(before)
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
        let forecasts = try SpanForecasts(store: self, span: span)
        let referencing = try referencingPairs(span)
        var summer = try PairSummer(store: self, locationID: span.location)
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
            !(key.source == span.source && key.issuedAt >= span.from && key.issuedAt < span.through + 3600)
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

    /// Sets a group's first and last valid hour from its stored pairs (a day that pruned runs had
    /// forecasts for keeps the hours it had as well: their pairs are gone from the rows).
    func refreshValidBounds(_ key: SummaryKey) throws {
        guard let variable = Variables.hourly.first(where: { $0.name == key.variable }) else { return }
        let forecastColumn = try Self.hourlyColumn(variable.name)
        let observedColumn = try Self.hourlyColumn(variable.observedVariable.name)
        let bounds = try db.cachedStatement(
            """
            SELECT min(valid_time), max(valid_time) FROM forecast_observation_pairs
            WHERE location_id = ?1 AND source = ?2 AND model = ?3 AND valid_time >= ?4 AND valid_time < ?5
              AND valid_time - issued_at >= ?6 AND valid_time - issued_at < ?7
              AND forecast_\(forecastColumn) IS NOT NULL AND observed_\(observedColumn) IS NOT NULL
            """)
        try bounds.bind([
            .integer(key.location), .text(key.source), .text(key.model), .integer(key.validFrom), .integer(key.validTo),
            .integer(Int64(key.leadFrom) * 3600), .integer(Int64(key.leadTo) * 3600)
        ])
        defer { bounds.reset() }
        guard let row = try bounds.step() else { return }
        let (first, last) = (row.optionalInt64(0), row.optionalInt64(1))
        let keep =
            try prunedRuns(validBetween: key.validFrom, and: key.validTo, locationID: key.location, model: key.model)
            > 0
        try db.run(
            """
            UPDATE verification_summaries SET
                first_valid_time = CASE WHEN ?7 THEN min(coalesce(?8, first_valid_time), first_valid_time) ELSE ?8 END,
                last_valid_time = CASE WHEN ?7 THEN max(coalesce(?9, last_valid_time), last_valid_time) ELSE ?9 END
            WHERE location_id = ?1 AND source = ?2 AND variable = ?3 AND model = ?4 AND lead_from_h = ?5 AND valid_from = ?6
            """,
            [
                .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                .integer(Int64(key.leadFrom)), .integer(key.validFrom), .integer(keep ? 1 : 0), first.sqlValue,
                last.sqlValue
            ])
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
            var summer = try PairSummer(store: self, locationID: location)
            while let row = try statement.step() {
                if let validTimes, !validTimes.contains(row.int64(4)) { continue }
                try summer.add(StoredRow(row))
            }
            summer.flush(into: &delta)
        case .observations(let location, let source, let from, let through):
            var summer = try PairSummer(store: self, locationID: location)
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
        var summer = try PairSummer(store: self, locationID: location)
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

    static let summaryUpsertSQL: String = {
        let sums = SummarySums.columns.map(\.name)
        let columns = summaryKeyColumns + sums + summarySpanColumns + ["first_valid_time", "last_valid_time"]
        // A score absent on one side takes the other's (as `SummarySums.merge`): rows prune wrote
        // before migration 0010 have no persistence sums, and keep none for their pruned pairs.
        func add(_ c: String) -> String {
            "\(c) = CASE WHEN excluded.\(c) IS NULL THEN \(c) ELSE coalesce(\(c), 0) + excluded.\(c) END"
        }
        func widen(_ c: String, _ f: String) -> String {
            "\(c) = CASE WHEN excluded.\(c) IS NULL THEN \(c) WHEN \(c) IS NULL THEN excluded.\(c) ELSE \(f)(\(c), excluded.\(c)) END"
        }
        return "INSERT INTO verification_summaries (" + columns.joined(separator: ", ") + ") VALUES ("
            + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ") "
            + "ON CONFLICT (location_id, source, variable, model, lead_from_h, valid_from) DO UPDATE SET "
            + sums.map(add).joined(separator: ", ") + ", "
            + [widen("first_valid_time", "min"), widen("last_valid_time", "max")].joined(separator: ", ")
    }()

    /// Adds a delta to `verification_summaries`; groups left without pairs are removed.
    func applySums(_ delta: SumsDelta) throws {
        let upsert = try db.cachedStatement(Self.summaryUpsertSQL)
        for (key, group) in delta.groups {
            let values = group.sums.values
            // Nothing changed (the same pairs subtracted and added back): no write.
            if delta.removes, values.allSatisfy({ $0 == nil || $0 == 0 }) { continue }
            // Bound one by one: building an array of ~35 values per group cost more than the upsert.
            try upsert.bind(key.location, at: 1)
            try upsert.bind(.text(key.model), at: 2)
            try upsert.bind(.text(key.source), at: 3)
            try upsert.bind(.text(key.variable), at: 4)
            try upsert.bind(Int64(key.leadFrom), at: 5)
            try upsert.bind(Int64(key.leadTo), at: 6)
            try upsert.bind(.text(key.validDate), at: 7)
            var index: Int32 = 8
            for (column, value) in zip(SummarySums.columns, values) {
                if let value, column.isCount {
                    try upsert.bind(Int64(value.rounded()), at: index)
                } else {
                    try upsert.bind(value, at: index)
                }
                index += 1
            }
            try upsert.bind(key.validFrom, at: index)
            try upsert.bind(key.validTo, at: index + 1)
            try upsert.bind(group.firstValid.sqlValue, at: index + 2)
            try upsert.bind(group.lastValid.sqlValue, at: index + 3)
            try upsert.runToCompletion()
        }
        guard delta.removes else { return }
        // Only a group that lost pairs can be left with none.
        let emptied = delta.groups.filter { $0.value.sums.continuous.n < 0 }.keys
        guard !emptied.isEmpty else { return }
        let prune = try db.cachedStatement(
            """
            DELETE FROM verification_summaries WHERE location_id = ? AND source = ? AND variable = ? AND model = ?
              AND lead_from_h = ? AND valid_from = ? AND n <= 0
            """)
        for key in emptied {
            try prune.bind([
                .integer(key.location), .text(key.source), .text(key.variable), .text(key.model),
                .integer(Int64(key.leadFrom)), .integer(key.validFrom)
            ])
            try prune.runToCompletion()
        }
    }

    /// Adds the sums of the rows stored before migration 0010 (or by SQL written straight into the
    /// tables, as the benchmark does) when the migration left its marker; removes the marker.
    func rebuildPendingSums() throws {
        guard (try db.scalarInt("SELECT count(*) FROM verification_sums_pending") ?? 0) > 0 else { return }
        try db.transaction {
            try pinOldSummaries()
            for location in try db.rows("SELECT id FROM locations ORDER BY id", [], { $0.int64(0) }) {
                try rebuildSums(ofLocation: location)
            }
            try db.run("DELETE FROM verification_sums_pending")
        }
    }

    /// Moves what prune wrote before migration 0006 (no span) into `verification_summaries`, each
    /// date's day taken in its location's zone now, as verify read them until then.
    func pinOldSummaries() throws {
        // Columns added since (persistence in 0010, directions in 0013) are not in the old table.
        let old = SummarySums.columns.filter {
            !PersistenceSums.sumColumns.contains($0) && !DirectionSums.sumColumns.contains($0)
        }
        var delta = SumsDelta()
        let rows = try db.rows(
            "SELECT s.location_id, s.model, s.source, s.variable, s.lead_from_h, s.lead_to_h, s.valid_date, l.timezone, "
                + old.map { "s." + $0.name }.joined(separator: ", ")
                + " FROM verification_summaries_unpinned s JOIN locations l ON l.id = s.location_id"
        ) { row -> (SummaryKey, [Double?])? in
            guard let span = ZoneTime.span(ofDate: row.string(6), timezone: row.string(7)) else { return nil }
            let key = SummaryKey(
                location: row.int64(0), model: row.string(1), source: row.string(2), variable: row.string(3),
                leadFrom: row.int(4), leadTo: row.int(5), validDate: row.string(6), validFrom: span.start,
                validTo: span.end)
            return (key, old.indices.map { row.optionalDouble(8 + $0) })
        }
        for case let (key, values)? in rows {
            var group = delta.groups[key] ?? SumsDelta.Group()
            group.sums.merge(
                SummarySums(values: values + Array(repeating: nil, count: SummarySums.columns.count - old.count)))
            group.firstValid = key.validFrom
            group.lastValid = key.validTo - 3600
            delta.groups[key] = group
        }
        try applySums(delta)
        try db.run("DELETE FROM verification_summaries_unpinned")
    }

    /// Adds the sums of every stored pair of a location (in slices, so memory stays bounded).
    func rebuildSums(ofLocation location: Int64) throws {
        var delta = SumsDelta()
        try sumPairs(ofLocation: location, into: &delta) { try self.applySums($0) }
        try applySums(delta)
    }

    /// Whether the sums of data stored before migration 0010 are still to be added (then verify
    /// reads the pairs).
    public func sumsPending() throws -> Bool {
        (try db.scalarInt("SELECT count(*) FROM verification_sums_pending") ?? 0) > 0
    }
}

/// Turns pair rows (`Store.pairColumns`) into summary groups: the lead bucket, the location's local
/// day, and the persistence reference of each run's issue time (looked up once per issue time and source).
/// Rows are summed under a key of integers (one lookup per row, not one per variable with four
/// strings hashed each: that was most of an ingest's CPU) and become `SummaryKey`s in `flush`.
struct PairSummer {
    let store: SQLiteStore
    let timezone: String
    /// Pairs left out: an enclosing write keeps their sums (`SumsKeeping.enclosingWriteKeeps`).
    let keptOutside: [ObservationSpan]
    var days: [Int64: (date: String, start: Int64, end: Int64)] = [:]
    var lastDay: (date: String, start: Int64, end: Int64)?
    struct ReferenceKey: Hashable {
        var source: String
        var issuedAt: Int64
    }
    var references: [ReferenceKey: [Double?]] = [:]
    /// A row's group of every scored variable: model and source as indices into `names`, the lead
    /// bucket's first hour, the local day's first instant.
    struct RowKey: Hashable {
        var location: Int64
        var model: Int
        var source: Int
        var leadFrom: Int
        var dayStart: Int64
    }
    var names: [String] = []
    var dayOf: [Int64: (date: String, end: Int64)] = [:]
    var leadTo: [Int: Int] = [:]
    /// Where each row key's groups start in `slots` (one slot per scored variable): the groups are
    /// summed in place, never copied in and out of a dictionary (a group is ~40 doubles).
    var pending: [RowKey: Int] = [:]
    var slots: [SumsDelta.Group?] = []
    /// Summary groups held (rows' keys times the scored variables).
    var pendingGroups: Int { pending.count * Self.scored.count }
    static let count = Variables.hourly.count
    static let scored: [(index: Int, observed: Int, variable: Variable)] = SQLiteStore.summedVariables.map { variable in
        (
            Variables.hourly.firstIndex(of: variable)!, Variables.hourly.firstIndex(of: variable.observedVariable)!,
            variable
        )
    }

    init(store: SQLiteStore, locationID: Int64) throws {
        self.store = store
        self.keptOutside = store.sumsKeptOutside
        self.timezone =
            try store.db.scalarText("SELECT timezone FROM locations WHERE id = ?", [.integer(locationID)]) ?? "UTC"
    }

    /// The local day holding `instant`.
    mutating func day(_ instant: Int64) -> (date: String, start: Int64, end: Int64) {
        if let last = lastDay, last.start <= instant, instant < last.end { return last }
        let hour = instant - ((instant % 3600) + 3600) % 3600
        if let day = days[hour] { return day }
        let date = ZoneTime.date(of: instant, timezone: timezone)
        let span = ZoneTime.span(ofDate: date, timezone: timezone) ?? (hour, hour + 3600)
        let day = (date: date, start: span.start, end: span.end)
        days[hour] = day
        lastDay = day
        return day
    }

    static let referenceSQL =
        "SELECT " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM observations WHERE location_id = ? AND source = ? AND time <= ? AND time > ? ORDER BY time DESC"

    /// The persistence reference of each column at an issue time: the latest non-NULL observation
    /// of the source at or before it and less than an hour before it (as `persistenceReferences`).
    mutating func reference(location: Int64, source: String, issuedAt: Int64) throws -> [Double?] {
        let key = ReferenceKey(source: source, issuedAt: issuedAt)
        if let cached = references[key] { return cached }
        let statement = try store.db.cachedStatement(Self.referenceSQL)
        try statement.bind([.integer(location), .text(source), .integer(issuedAt), .integer(issuedAt - 3600)])
        defer { statement.reset() }
        var values = [Double?](repeating: nil, count: Self.count)
        while let row = try statement.step() {
            for index in 0..<Self.count where values[index] == nil { values[index] = row.optionalDouble(index) }
            if !values.contains(where: { $0 == nil }) { break }
        }
        references[key] = values
        return values
    }

    /// The index of a model or source name in `names`.
    mutating func nameIndex(_ name: String) -> Int {
        if let index = names.firstIndex(of: name) { return index }
        names.append(name)
        return names.count - 1
    }

    /// Adds one pair row's sums (`Store.pairColumns`), every scored variable that has both values.
    mutating func add(_ row: StoredRow) throws {
        try add(
            location: row.int64(0), model: nameIndex(row.string(1)), source: nameIndex(row.string(2)),
            issued: row.int64(3), valid: row.int64(4)
        ) { row.optionalDouble(5 + $0) }
    }

    /// Adds one pair's sums: `model` and `source` are indices into `names`; `value(i)` is the
    /// forecast of `Variables.hourly[i]` for i < `count`, the observation of `Variables.hourly[i - count]` above.
    mutating func add(
        location: Int64, model: Int, source: Int, issued: Int64, valid: Int64, value: (Int) -> Double?
    ) throws {
        guard let bucket = LeadBuckets.bucket(forLeadHours: Double(valid - issued) / 3600) else { return }
        let sourceName = names[source]
        // A model's own past hours are not a truth to score it against.
        if SourceNames.isOwnAnalysis(source: sourceName, model: names[model]) { return }
        if keptOutside.contains(where: {
            $0.contains(location: location, source: sourceName, issuedAt: issued, validTime: valid)
        }) {
            return
        }
        let day = day(valid)
        let key = RowKey(location: location, model: model, source: source, leadFrom: bucket.from, dayStart: day.start)
        let base: Int
        if let known = pending[key] {
            base = known
        } else {
            dayOf[day.start] = (day.date, day.end)
            leadTo[bucket.from] = bucket.to
            base = slots.count
            slots.append(contentsOf: repeatElement(nil, count: Self.scored.count))
            pending[key] = base
        }
        var reference: [Double?]?
        for (slot, (index, observedIndex, variable)) in Self.scored.enumerated() {
            guard let forecast = value(index), let observed = value(Self.count + observedIndex) else { continue }
            if reference == nil && !variable.isProbability {
                reference = try self.reference(location: location, source: sourceName, issuedAt: issued)
            }
            if slots[base + slot] == nil { slots[base + slot] = SumsDelta.Group() }
            slots[base + slot]!.sums.add(
                forecast: forecast, observed: observed,
                reference: variable.isProbability ? nil : reference?[observedIndex], variable: variable,
                threshold: SQLiteStore.summedThreshold)
            slots[base + slot]!.firstValid = min(slots[base + slot]!.firstValid ?? valid, valid)
            slots[base + slot]!.lastValid = max(slots[base + slot]!.lastValid ?? valid, valid)
        }
    }

    /// Moves the groups summed so far into `delta`.
    mutating func flush(into delta: inout SumsDelta) {
        for (key, base) in pending {
            let groups = slots[base..<base + Self.scored.count]
            guard let day = dayOf[key.dayStart], let leadTo = leadTo[key.leadFrom] else { continue }
            for (slot, group) in zip(0..., groups) {
                guard let group else { continue }
                let summaryKey = SummaryKey(
                    location: key.location, model: names[key.model], source: names[key.source],
                    variable: Self.scored[slot].variable.name, leadFrom: key.leadFrom, leadTo: leadTo,
                    validDate: day.date, validFrom: key.dayStart, validTo: day.end)
                if var existing = delta.groups[summaryKey] {
                    existing.sums.merge(group.sums)
                    existing.firstValid = min(existing.firstValid ?? .max, group.firstValid ?? .max)
                    existing.lastValid = max(existing.lastValid ?? .min, group.lastValid ?? .min)
                    delta.groups[summaryKey] = existing
                } else {
                    delta.groups[summaryKey] = group
                }
            }
        }
        pending = [:]
        slots = []
    }
}

/// Pair rows (`Store.pairColumns`) held in memory: keys, and each row's forecast and observed
/// values in one flat array (NaN for NULL).
struct PairRows {
    var keys: [(location: Int64, model: String, source: String, issued: Int64, valid: Int64)] = []
    var values: [Double] = []
    static let width = 2 * PairSummer.count

    mutating func append(_ row: StoredRow) {
        keys.append((row.int64(0), row.string(1), row.string(2), row.int64(3), row.int64(4)))
        for index in 0..<Self.width { values.append(row.optionalDouble(5 + index) ?? .nan) }
    }

    func add(into summer: inout PairSummer) throws {
        for (row, key) in keys.enumerated() {
            let base = row * Self.width
            try summer.add(
                location: key.location, model: summer.nameIndex(key.model), source: summer.nameIndex(key.source),
                issued: key.issued, valid: key.valid
            ) { index in
                let value = values[base + index]
                return value.isNaN ? nil : value
            }
        }
    }
}

/// The forecasts of every run at the hours of an `ObservationSpan` (each run's hours read in one
/// range of the hourly table's key), to be paired in memory with the span's observations.
struct SpanForecasts {
    let location: Int64
    var models: [String] = []
    /// (index into `models`, issue time, valid time), with `PairSummer.count` values each in `values`.
    var rows: [(model: Int, issued: Int64, valid: Int64)] = []
    var values: [Double] = []

    /// Every run with a lead of 0 ..< 384 h at some hour of the span (as `Store.pairLead`), and its
    /// hours in the span: one seek into each run's rows, done by SQLite in one statement.
    static let forecastsSQL =
        "SELECT r.model, r.issued_at, h.valid_time, " + Variables.hourlyNames.map { "h." + $0 }.joined(separator: ", ")
        + " FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued"
        + " CROSS JOIN hourly_forecasts h ON h.run_id = r.id"
        + " AND h.valid_time BETWEEN max(?2, r.issued_at) AND min(?3, r.issued_at + ?4 - 1)"
        + " WHERE r.location_id = ?1 AND r.issued_at > ?2 - ?4 AND r.issued_at <= ?3"

    init(store: SQLiteStore, span: ObservationSpan) throws {
        location = span.location
        let statement = try store.db.cachedStatement(Self.forecastsSQL)
        try statement.bind([
            .integer(span.location), .integer(span.from), .integer(span.through), .integer(LeadRule.maxSeconds)
        ])
        defer { statement.reset() }
        var lastModel = -1
        while let row = try statement.step() {
            let index: Int
            if lastModel >= 0, row.withUTF8(0, { $0.elementsEqual(models[lastModel].utf8) }) {
                index = lastModel
            } else {
                let model = row.string(0)
                index = models.firstIndex(of: model) ?? models.count
                if index == models.count { models.append(model) }
                lastModel = index
            }
            rows.append((index, row.int64(1), row.int64(2)))
            for column in 0..<PairSummer.count { values.append(row.optionalDouble(3 + column) ?? .nan) }
        }
    }

    /// Adds the pairs these forecasts make with `observations` (by hour, as `Store.observations(in:)`).
    func pair(with observations: [Int64: [Double]], source: String, into summer: inout PairSummer) throws {
        let sourceIndex = summer.nameIndex(source)
        let modelIndex = models.map { summer.nameIndex($0) }
        let count = PairSummer.count
        for (row, key) in rows.enumerated() {
            guard let observed = observations[key.valid] else { continue }
            let base = row * count
            try summer.add(
                location: location, model: modelIndex[key.model], source: sourceIndex, issued: key.issued,
                valid: key.valid
            ) { index in
                let value = index < count ? values[base + index] : observed[index - count]
                return value.isNaN ? nil : value
            }
        }
    }
}

extension SQLiteStore {
    /// Recomputes the sums of every group whose runs are all still stored (none pruned) from the
    /// rows and compares them with `verification_summaries`: counts exactly, sums to 1e-9 of their
    /// size. With `repair`, differing groups are rewritten from the rows (one transaction).
    public func checkSums(repair: Bool = false) throws -> SumsCheck {
        var check = SumsCheck()
        let body = {
            for location in try self.db.rows(
                "SELECT id, name FROM locations ORDER BY id", [],
                {
                    (id: $0.int64(0), name: $0.string(1))
                })
            {
                try self.checkSums(ofLocation: location.id, name: location.name, repair: repair, into: &check)
            }
        }
        try db.transaction(repair ? .immediate : .deferred, body)
        return check
    }

    func checkSums(ofLocation location: Int64, name: String, repair: Bool, into check: inout SumsCheck) throws {
        var expected = SumsDelta()
        try sumPairs(ofLocation: location, into: &expected)
        struct Key: Hashable {
            var model: String, source: String, variable: String, leadFrom: Int, validFrom: Int64
        }
        func key(_ k: SummaryKey) -> Key {
            Key(model: k.model, source: k.source, variable: k.variable, leadFrom: k.leadFrom, validFrom: k.validFrom)
        }
        var computed: [Key: (SummaryKey, SumsDelta.Group)] = [:]
        for (k, group) in expected.groups { computed[key(k)] = (k, group) }
        let count = SummarySums.columns.count
        var stored: [Key: (SummaryKey, SummarySums)] = [:]
        for (k, sums) in try db.rows(
            "SELECT model, source, variable, lead_from_h, lead_to_h, valid_date, valid_from, valid_to, "
                + SummarySums.columns.map(\.name).joined(separator: ", ")
                + " FROM verification_summaries WHERE location_id = ?", [.integer(location)],
            { row -> (SummaryKey, SummarySums) in
                (
                    SummaryKey(
                        location: location, model: row.string(0), source: row.string(1), variable: row.string(2),
                        leadFrom: row.int(3), leadTo: row.int(4), validDate: row.string(5), validFrom: row.int64(6),
                        validTo: row.int64(7)),
                    SummarySums(values: (0..<count).map { row.optionalDouble(8 + $0) })
                )
            })
        {
            stored[key(k)] = (k, sums)
        }
        var prunedAt: [String: Bool] = [:]
        let columns = SummarySums.columns
        for k in Set(computed.keys).union(stored.keys) {
            let summaryKey = computed[k]?.0 ?? stored[k]!.0
            let cacheKey = k.model + "\u{1}" + String(k.validFrom)
            let pruned: Bool
            if let cached = prunedAt[cacheKey] {
                pruned = cached
            } else {
                pruned =
                    try prunedRuns(
                        validBetween: summaryKey.validFrom, and: summaryKey.validTo, locationID: location,
                        model: k.model
                    ) > 0
                prunedAt[cacheKey] = pruned
            }
            if pruned {
                check.notCheckable += 1
                continue
            }
            check.checked += 1
            // An absent score counts as zeros: subtracting every pair of a score leaves zeros, not NULL.
            let want = computed[k]?.1.sums.values ?? Array(repeating: nil, count: count)
            let have = stored[k]?.1.values ?? Array(repeating: nil, count: count)
            let differs = columns.indices.contains { index in
                let (a, b) = (want[index] ?? 0, have[index] ?? 0)
                // An overflowed sum (infinity, written before values were range-checked) compares
                // equal to nothing: `abs(a − ∞) > 1e-9·∞` is false, so it must be caught here.
                guard a.isFinite, b.isFinite else { return true }
                return columns[index].isCount ? a != b : abs(a - b) > 1e-9 * max(1, abs(a), abs(b))
            }
            guard differs else { continue }
            let day = summaryKey.validDate
            let what =
                "\(name), \(k.model), \(k.source), \(k.variable), lead \(k.leadFrom) h, \(day): kept n=\(stored[k].map { String($0.1.continuous.n) } ?? "none"), rows n=\(computed[k].map { String($0.1.sums.continuous.n) } ?? "none")"
            check.differing.append(what)
            if repair {
                try db.run(
                    """
                    DELETE FROM verification_summaries WHERE location_id = ? AND source = ? AND variable = ? AND model = ?
                      AND lead_from_h = ? AND valid_from = ?
                    """,
                    [
                        .integer(location), .text(k.source), .text(k.variable), .text(k.model),
                        .integer(Int64(k.leadFrom)), .integer(k.validFrom)
                    ])
                if let (fresh, group) = computed[k] {
                    var delta = SumsDelta()
                    delta.groups[fresh] = group
                    try applySums(delta)
                }
                check.repaired += 1
            }
        }
        check.differing.sort()
    }
}
