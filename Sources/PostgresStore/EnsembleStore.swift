// Ensembles on PostgreSQL (issue 31 on the engine of issue 30), as the SQLite engine keeps them
// (StoreSQLite/EnsembleStore.swift): a run stored whole or not at all, with its kept sums, in one
// transaction under the location's advisory lock (as every other write of the location), so two
// ingest processes never store one run twice; the members by COPY in WxStore's packed format
// (MemberBlob: byte-shuffled and deflated, tag 0x01), the same bytes as SQLite's; run ids counted per
// location (location_counters.next_ensemble_run_id) and every key led by location_id, for Citus.
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine: EnsembleStore {
    public func storeEnsemble(
        _ forecast: EnsembleForecast, grid: (latitude: Double, longitude: Double, elevation: Double?),
        for location: Location, issuedAt: Int64?, fetchedAt: Int64
    ) throws -> EnsembleStoreOutcome {
        let content = try EnsembleRunContent(forecast, grid: grid)
        return try db.transaction {
            try db.lockForTransaction(Self.lockKey(location.id))
            guard try isStillSaved(location) else { throw StoreError.locationRemoved(name: location.name) }
            if let same = try db.scalarInt(
                "SELECT id FROM ensemble_runs WHERE location_id = $1 AND model = $2 AND content_hash = $3",
                [.integer(location.id), .text(forecast.model), .integer(content.contentHash)])
            {
                return .repeated(runID: same)
            }
            guard
                let runID = try db.scalarInt(
                    "UPDATE location_counters SET next_ensemble_run_id = next_ensemble_run_id + 1 WHERE location_id = $1 RETURNING next_ensemble_run_id - 1",
                    [.integer(location.id)])
            else { throw StoreError.locationRemoved(name: location.name) }
            let issued = issuedAt ?? EnsembleIssue.estimated(model: forecast.model, fetchedAt: fetchedAt)
            try db.run(
                """
                INSERT INTO ensemble_runs (location_id, id, model, issued_at, issued_at_source, fetched_at,
                    grid_latitude, grid_longitude, grid_elevation, first_valid_time, hour_count, member_count,
                    content_hash)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                """,
                [
                    .integer(location.id), .integer(runID), .text(forecast.model), .integer(issued),
                    .text(issuedAt == nil ? "cadence" : "model_run"), .integer(fetchedAt), .real(grid.latitude),
                    .real(grid.longitude), grid.elevation.postgresValue, .integer(content.firstValidTime),
                    .integer(Int64(content.hours)), .integer(Int64(content.members)), .integer(content.contentHash)
                ])
            try db.copy(into: "ensemble_values", columns: ["location_id", "run_id", "variable", "members"]) { rows in
                for (name, raw) in content.blobs {
                    rows.append(location.id)
                    rows.append(runID)
                    try rows.append(name)
                    try rows.append(Self.hex(MemberBlob.pack(raw)))
                    try rows.endRow()
                }
            }
            try addEnsembleRunSums(
                EnsembleRunWindow(
                    id: runID, location: location.id, model: forecast.model, issuedAt: issued,
                    firstValidTime: content.firstValidTime, hourCount: content.hours, memberCount: content.members))
            return .stored(runID: runID)
        }
    }

    public func ensembleRuns(locationID: Int64, model: String) throws -> [EnsembleRun] {
        try db.rows(
            """
            SELECT id, location_id, model, issued_at, issued_at_source, fetched_at, first_valid_time, hour_count,
                member_count
            FROM ensemble_runs WHERE location_id = $1 AND model = $2 ORDER BY issued_at, id
            """, [.integer(locationID), .text(model)]
        ) {
            EnsembleRun(
                id: $0.int64(0), locationID: $0.int64(1), model: $0.string(2), issuedAt: $0.int64(3),
                issuedAtSource: $0.string(4), fetchedAt: $0.int64(5), firstValidTime: $0.int64(6),
                hourCount: Int($0.int64(7)), memberCount: Int($0.int64(8)))
        }
    }

    public func observations(of variable: Variable, locationID: Int64, source: String, from: Int64, to: Int64)
        throws -> [Int64: Double]
    {
        let column = try Self.hourlyColumn(variable.name)
        var found: [Int64: Double] = [:]
        for (time, value) in try db.rows(
            "SELECT time, \(column) FROM observations WHERE location_id = $1 AND source = $2 AND time BETWEEN $3::bigint AND $4::bigint",
            [.integer(locationID), .text(source), .integer(from), .integer(to)], { ($0.int64(0), $0.optionalDouble(1)) }
        ) {
            if let value { found[time] = value }
        }
        return found
    }

    public func ensembleMembers(locationID: Int64, runID: Int64, variable: String) throws -> [[Float]]? {
        let found = try db.firstRow(
            """
            SELECT r.hour_count, r.member_count, v.members FROM ensemble_values v
            JOIN ensemble_runs r ON r.location_id = v.location_id AND r.id = v.run_id
            WHERE v.location_id = $1 AND v.run_id = $2 AND v.variable = $3
            """, [.integer(locationID), .integer(runID), .text(variable)]
        ) { (hours: Int($0.int64(0)), members: Int($0.int64(1)), bytes: Self.bytes(fromHex: $0.string(2))) }
        guard let found else { return nil }
        return try MemberBlob.decode(found.bytes, hours: found.hours, members: found.members)
    }

    static let prunableEnsembleSQL = """
        SELECT r.location_id, r.id FROM ensemble_runs r
        WHERE r.issued_at < $1::bigint
          AND EXISTS (SELECT 1 FROM ensemble_values v WHERE v.location_id = r.location_id AND v.run_id = r.id)
          AND EXISTS (SELECT 1 FROM ensemble_runs n
                      WHERE n.location_id = r.location_id AND n.model = r.model
                        AND (n.issued_at > r.issued_at OR (n.issued_at = r.issued_at AND n.id > r.id)))
        ORDER BY r.location_id, r.id
        """

    /// The ensemble runs issued before `cutoff` that still have members, except the latest run of
    /// each location and model (the next fetch may repeat it).
    public func prunableEnsembleRuns(issuedBefore cutoff: Int64) throws -> Int {
        try db.rows(Self.prunableEnsembleSQL, [.integer(cutoff)]) { $0.int64(1) }.count
    }

    /// Deletes the members of those runs in one transaction under their locations' locks, keeping
    /// the runs' headers (a later fetch of the same content is still a repeat) and their sums.
    public func pruneEnsembleMembers(issuedBefore cutoff: Int64) throws -> Int {
        try db.transaction {
            let locations = try db.rows(Self.prunableEnsembleSQL, [.integer(cutoff)]) { $0.int64(0) }
            // In location order, as every other write takes one location's lock: no deadlock.
            let locked = Set(locations)
            for location in locked.sorted() { try db.lockForTransaction(Self.lockKey(location)) }
            // Read again under the locks: an ingest may have stored a newer run meanwhile.
            let runs = try db.rows(Self.prunableEnsembleSQL, [.integer(cutoff)]) {
                (location: $0.int64(0), id: $0.int64(1))
            }.filter { locked.contains($0.location) }
            for run in runs {
                try db.run(
                    "DELETE FROM ensemble_values WHERE location_id = $1 AND run_id = $2",
                    [.integer(run.location), .integer(run.id)])
            }
            return runs.count
        }
    }
}
