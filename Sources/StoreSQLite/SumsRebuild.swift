import WxCore
import WxSQLite
import WxStore

// The sums of rows stored before migration 0010 (or written straight into the tables), added once
// after migrating, and what prune wrote before 0006 pinned to its day's span.

extension SQLiteStore {
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
