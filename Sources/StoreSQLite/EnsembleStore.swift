import WxCore
import WxSQLite
import WxStore

extension SQLiteStore: EnsembleStore {
    public func storeEnsemble(
        _ forecast: EnsembleForecast, grid: (latitude: Double, longitude: Double, elevation: Double?),
        for location: Location, issuedAt: Int64?, fetchedAt: Int64
    ) throws -> EnsembleStoreOutcome {
        let content = try EnsembleRunContent(forecast, grid: grid)
        let (hours, members, first, contentHash) = (
            content.hours, content.members, content.firstValidTime, content.contentHash
        )
        return try db.transaction {
            guard try isStillSaved(location) else { throw StoreError.locationRemoved(name: location.name) }
            if let same = try db.firstRow(
                "SELECT id FROM ensemble_runs WHERE location_id = ? AND model = ? AND content_hash = ?",
                [.integer(location.id), .text(forecast.model), .integer(contentHash)], { $0.int64(0) })
            {
                return .repeated(runID: same)
            }
            let issued = issuedAt ?? EnsembleIssue.estimated(model: forecast.model, fetchedAt: fetchedAt)
            try db.run(
                """
                INSERT INTO ensemble_runs (location_id, model, issued_at, issued_at_source, fetched_at, grid_latitude,
                    grid_longitude, grid_elevation, first_valid_time, hour_count, member_count, content_hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(location.id), .text(forecast.model), .integer(issued),
                    .text(issuedAt == nil ? "cadence" : "model_run"), .integer(fetchedAt), .real(grid.latitude),
                    .real(grid.longitude), grid.elevation.map { .real($0) } ?? .null, .integer(first),
                    .integer(Int64(hours)), .integer(Int64(members)), .integer(contentHash)
                ])
            let runID = try db.scalarInt("SELECT last_insert_rowid()") ?? 0
            for (name, bytes) in content.blobs {
                // The hash above is of the raw bytes, so a run stored raw before packing still repeats.
                try db.run(
                    "INSERT INTO ensemble_values (run_id, variable, members) VALUES (?, ?, ?)",
                    [.integer(runID), .text(name), .blob(MemberBlob.pack(bytes))])
            }
            try addEnsembleRunSums(runID)
            return .stored(runID: runID)
        }
    }

    public func ensembleRuns(locationID: Int64, model: String) throws -> [EnsembleRun] {
        try db.rows(
            """
            SELECT id, location_id, model, issued_at, issued_at_source, fetched_at, first_valid_time, hour_count,
                member_count
            FROM ensemble_runs WHERE location_id = ? AND model = ? ORDER BY issued_at, id
            """, [.integer(locationID), .text(model)]
        ) {
            EnsembleRun(
                id: $0.int64(0), locationID: $0.int64(1), model: $0.string(2), issuedAt: $0.int64(3),
                issuedAtSource: $0.string(4), fetchedAt: $0.int64(5), firstValidTime: $0.int64(6),
                hourCount: $0.int(7), memberCount: $0.int(8))
        }
    }

    public func observations(of variable: Variable, locationID: Int64, source: String, from: Int64, to: Int64)
        throws -> [Int64: Double]
    {
        let column = try Self.hourlyColumn(variable.name)
        var found: [Int64: Double] = [:]
        for (time, value) in try db.rows(
            "SELECT time, \(column) FROM observations WHERE location_id = ? AND source = ? AND time BETWEEN ? AND ?",
            [.integer(locationID), .text(source), .integer(from), .integer(to)], { ($0.int64(0), $0.optionalDouble(1)) }
        ) {
            if let value { found[time] = value }
        }
        return found
    }

    public func ensembleMembers(locationID: Int64, runID: Int64, variable: String) throws -> [[Float]]? {
        try ensembleMembers(runID: runID, variable: variable)
    }

    /// One run's members of `variable` (run ids are unique in a SQLite file): as the protocol's.
    public func ensembleMembers(runID: Int64, variable: String) throws -> [[Float]]? {
        let found = try db.firstRow(
            """
            SELECT r.hour_count, r.member_count, v.members FROM ensemble_values v JOIN ensemble_runs r ON r.id = v.run_id
            WHERE v.run_id = ? AND v.variable = ?
            """, [.integer(runID), .text(variable)]
        ) { row -> (Int, Int, [UInt8]) in
            guard case .blob(let bytes) = row.value(2) else { return (row.int(0), row.int(1), []) }
            return (row.int(0), row.int(1), bytes)
        }
        guard let found else { return nil }
        return try MemberBlob.decode(found.2, hours: found.0, members: found.1)
    }
}
