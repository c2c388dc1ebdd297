// Observations on PostgreSQL, as the SQLite engine stores them (StoreSQLite/ForecastRuns.swift,
// StationCSV.swift, Stations/StationImport.swift): a newer recording replaces the values it has and
// keeps those it lacks, an older one changes nothing (unless `replacing`), and every write that
// changes a value keeps the sums of the pairs it touches, once over the span of the hours that
// change. Writes made outside `store` take the location's advisory lock in a transaction of their own.
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    static let observationColumns = ["location_id", "source", "time"] + Variables.hourlyNames + ["recorded_at"]
    static let observationInsertPrefix =
        "INSERT INTO observations (" + observationColumns.joined(separator: ", ") + ") VALUES "
    /// A newer recording replaces the values it has and keeps those it lacks.
    static let observationReplaceConflict =
        " ON CONFLICT (location_id, time, source) DO UPDATE SET "
        + Variables.hourlyNames.map { "\($0) = coalesce(excluded.\($0), observations.\($0))" }.joined(separator: ", ")
        + ", recorded_at = excluded.recorded_at"
    /// An older recording changes nothing.
    static let observationUpsertConflict =
        observationReplaceConflict + " WHERE excluded.recorded_at >= observations.recorded_at"
    static let observationReplaceSQL =
        MultiRowStatement.sql(
            prefix: observationInsertPrefix, suffix: observationReplaceConflict, width: observationColumns.count,
            rows: 1,
            casts: [])
    static let observationUpsertSQL =
        MultiRowStatement.sql(
            prefix: observationInsertPrefix, suffix: observationUpsertConflict, width: observationColumns.count,
            rows: 1,
            casts: [])
    /// Observation rows per upsert statement (16 parameters each).
    static let observationRowsPerStatement = 2000
    static let observationValuesSQL =
        "SELECT recorded_at, " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM observations WHERE location_id = $1 AND time = $2 AND source = $3"

    /// Runs `body` in the transaction already open (whose caller holds the location's lock), or in
    /// one of its own under the location's lock.
    func lockedWrite<T>(_ locationID: Int64, _ body: () throws -> T) throws -> T {
        if db.isInTransaction { return try body() }
        return try db.transaction {
            try db.lockForTransaction(Self.lockKey(locationID))
            return try body()
        }
    }

    /// Inserts or updates one observation, keeping the sums of the pairs it changes.
    public func upsertObservation(
        locationID: Int64, source: String, time: Int64, values: [Double?], recordedAt: Int64, replacing: Bool
    ) throws {
        try lockedWrite(locationID) {
            func write() throws {
                try db.run(
                    replacing ? Self.observationReplaceSQL : Self.observationUpsertSQL,
                    [.integer(locationID), .text(source), .integer(time)] + values.map(\.postgresValue)
                        + [.integer(recordedAt)])
            }
            // The same values again (a repeated fetch's past hours) change no pair: only the row is written.
            guard sumsKeeping.keepsSums,
                try observationChanges(locationID, source, time, values, recordedAt, replacing)
            else { return try write() }
            try keepingSums(
                .observations(location: locationID, source: source, from: time, through: time), location: locationID,
                byRun: true, write)
        }
    }

    /// Whether the upsert would change a stored value (or add the row), as its SQL decides.
    func observationChanges(
        _ locationID: Int64, _ source: String, _ time: Int64, _ values: [Double?], _ recordedAt: Int64,
        _ replacing: Bool
    ) throws -> Bool {
        let row = try db.firstRow(
            Self.observationValuesSQL, [.integer(locationID), .integer(time), .text(source)],
            { row in (recordedAt: row.int64(0), values: (0..<values.count).map { row.optionalDouble($0 + 1) }) })
        return Self.changes(values, recordedAt: recordedAt, replacing: replacing, stored: row)
    }

    /// Whether writing `values` recorded at `recordedAt` over the stored row changes it.
    static func changes(
        _ values: [Double?], recordedAt: Int64, replacing: Bool, stored: (recordedAt: Int64, values: [Double?])?
    ) -> Bool {
        guard let stored else { return true }
        if !replacing, recordedAt < stored.recordedAt { return false }
        for (index, value) in values.enumerated() {
            if let value, value != stored.values[index] { return true }
        }
        return false
    }

    static let observationBatchValuesSQL =
        "SELECT time, recorded_at, " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM observations WHERE location_id = $1 AND source = $2 AND time = ANY($3::bigint[])"

    /// The hours of `rows` whose write would change a stored value (or add a row): one read for
    /// them all, not one per hour.
    func changedObservationTimes(
        _ rows: [(time: Int64, values: [Double?])], locationID: Int64, source: String, recordedAt: Int64,
        replacing: Bool
    ) throws -> [Int64] {
        guard !rows.isEmpty else { return [] }
        var stored: [Int64: (recordedAt: Int64, values: [Double?])] = [:]
        let times = "{" + Set(rows.map(\.time)).map { String($0) }.joined(separator: ",") + "}"
        try db.stream(Self.observationBatchValuesSQL, [.integer(locationID), .text(source), .text(times)]) { row in
            stored[row.int64(0)] = (row.int64(1), (0..<Variables.hourly.count).map { row.optionalDouble($0 + 2) })
        }
        return rows.filter {
            Self.changes($0.values, recordedAt: recordedAt, replacing: replacing, stored: stored[$0.time])
        }.map(\.time)
    }

    /// Writes observation rows as they are (no sums: the caller keeps them), a few thousand per
    /// statement. Hours given twice are written one by one, in order, as each write sees the one before.
    func upsertObservationRows(
        _ rows: [(time: Int64, values: [Double?])], locationID: Int64, source: String, recordedAt: Int64,
        replacing: Bool
    ) throws {
        func arguments(_ row: (time: Int64, values: [Double?])) -> [PostgresValue] {
            [.integer(locationID), .text(source), .integer(row.time)] + row.values.map(\.postgresValue)
                + [.integer(recordedAt)]
        }
        guard Set(rows.map(\.time)).count == rows.count else {
            for row in rows {
                try db.run(replacing ? Self.observationReplaceSQL : Self.observationUpsertSQL, arguments(row))
            }
            return
        }
        var statement = MultiRowStatement(
            Self.observationInsertPrefix, width: Self.observationColumns.count,
            suffix: replacing ? Self.observationReplaceConflict : Self.observationUpsertConflict,
            rowsPerStatement: Self.observationRowsPerStatement)
        for row in rows { try statement.append(arguments(row), db) }
        try statement.flush(db)
    }

    /// Like `upsertObservations`, in one transaction of its own.
    @discardableResult
    public func saveObservations(
        _ series: ModelForecast, through: Int64, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int {
        try lockedWrite(locationID) {
            try upsertObservations(
                series, through: through, locationID: locationID, source: source, recordedAt: recordedAt)
        }
    }

    /// Upserts a series' hours (those valid at or before `through`) as observations of `source`;
    /// hours with no value at all are skipped. The sums of the pairs of the hours that change are
    /// kept once over their span. Returns how many hours were written.
    @discardableResult
    public func upsertObservations(
        _ series: ModelForecast, through: Int64, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int {
        var rows: [(time: Int64, values: [Double?])] = []
        for (row, time) in series.hourlyTimes.enumerated() where time <= through {
            let values = series.hourly.map { $0?[row] ?? nil }
            if values.allSatisfy({ $0 == nil }) { continue }
            rows.append((time, values))
        }
        try lockedWrite(locationID) {
            try writeObservations(
                rows, locationID: locationID, source: source, recordedAt: recordedAt, replacing: false)
        }
        return rows.count
    }

    /// Writes observation rows with their sums kept once over the span of the rows that change.
    func writeObservations(
        _ rows: [(time: Int64, values: [Double?])], locationID: Int64, source: String, recordedAt: Int64,
        replacing: Bool
    ) throws {
        func write() throws {
            try upsertObservationRows(
                rows, locationID: locationID, source: source, recordedAt: recordedAt, replacing: replacing)
        }
        // Inside a `storeAll` chunk that keeps the sums of these hours itself, nothing is to be done here.
        let keptOutside =
            rows.isEmpty
            || sumsKeeping.keptOutside.contains {
                $0.covers(
                    location: locationID, source: source, from: rows.map(\.time).min()!,
                    through: rows.map(\.time).max()!)
            }
        let changed =
            try sumsKeeping.keepsSums && !keptOutside
            ? changedObservationTimes(
                rows, locationID: locationID, source: source, recordedAt: recordedAt, replacing: replacing) : []
        guard let first = changed.min(), let last = changed.max() else { return try keeping(.enclosingWrite, write) }
        try keepingSums(
            .observations(location: locationID, source: source, from: first, through: last), location: locationID,
            byRun: true
        ) { try keeping(.enclosingWrite, write) }
    }

    /// Stores station observations in one transaction; returns how many rows were written. A
    /// station's values replace what an earlier import of the same source stored for those hours.
    @discardableResult
    public func importObservations(_ csv: StationCSV, locationID: Int64, source: String, recordedAt: Int64) throws
        -> Int
    {
        try lockedWrite(locationID) {
            try writeObservations(
                csv.rows.map { ($0.time, $0.values) }, locationID: locationID, source: source, recordedAt: recordedAt,
                replacing: true)
            return csv.rows.count
        }
    }

    /// Replaces a station's observations of the file's variables over the file's hours (values the
    /// file lacks are cleared, rows left empty removed), keeping the sums once for the whole span.
    @discardableResult
    public func replaceStationObservations(
        _ result: StationImport, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int {
        guard let first = result.firstHour, let last = result.lastHour, !result.variables.isEmpty else { return 0 }
        let names = result.variables.map { Variables.hourlyNames[$0] }
        let span: [PostgresValue] = [.integer(locationID), .text(source), .integer(first), .integer(last)]
        return try lockedWrite(locationID) {
            try keepingSums(
                .observations(location: locationID, source: source, from: first, through: last), location: locationID
            ) {
                try keeping(.enclosingWrite) {
                    try db.run(
                        "UPDATE observations SET " + names.map { "\($0) = NULL" }.joined(separator: ", ")
                            + " WHERE location_id = $1 AND source = $2 AND time BETWEEN $3::bigint AND $4::bigint", span
                    )
                    try upsertObservationRows(
                        result.hours.map { ($0.time, $0.values) }, locationID: locationID, source: source,
                        recordedAt: recordedAt, replacing: false)
                    try db.run(
                        "DELETE FROM observations WHERE location_id = $1 AND source = $2 AND time BETWEEN $3::bigint AND $4::bigint AND "
                            + Variables.hourlyNames.map { "\($0) IS NULL" }.joined(separator: " AND "), span)
                    return result.hours.count
                }
            }
        }
    }
}
