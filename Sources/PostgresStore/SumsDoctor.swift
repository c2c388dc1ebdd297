// `wxdb doctor --deep` on PostgreSQL: the kept sums recomputed from the stored pairs with the
// engine-neutral folding both engines share (WxStore's PairSummer), and compared by WxStore's
// SumsAudit, as on SQLite (Sources/StoreSQLite/SumsDoctor.swift). One read-only snapshot
// (REPEATABLE READ) for the whole check, so writers running meanwhile cannot make it see half a run;
// a repair holds each location's advisory lock instead.
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// Recomputes the sums of every group whose runs are all still stored (none pruned) from the
    /// rows and compares them with `verification_summaries`: counts exactly, sums to 1e-9 of their
    /// size. With `repair`, differing groups are rewritten from the rows in one transaction, each
    /// location under its advisory lock (no write of it can add sums meanwhile).
    public func checkSums(repair: Bool) throws -> SumsCheck {
        var check = SumsCheck()
        try db.transaction {
            if !repair { _ = try db.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY") }
            let locations = try db.rows("SELECT id, name, timezone FROM locations ORDER BY id") {
                (id: $0.int64(0), name: $0.string(1), timezone: $0.string(2))
            }
            for location in locations {
                if repair { try db.lockForTransaction(Self.lockKey(location.id)) }
                try checkSums(
                    ofLocation: location.id, name: location.name, timezone: location.timezone, repair: repair,
                    into: &check)
            }
        }
        check.differing.sort()
        return check
    }

    func checkSums(
        ofLocation location: Int64, name: String, timezone: String, repair: Bool, into check: inout SumsCheck
    ) throws {
        // libpq reads one statement at a time: the persistence references are looked up in the
        // location's observations held here, not by a query in the middle of the pairs' stream.
        let observations = try ObservationHistory(db: db, location: location)
        var summer = PairSummer(timezone: timezone, keptOutside: []) { _, source, issued in
            observations.reference(source: source, issuedAt: issued)
        }
        try db.stream(
            "SELECT " + Self.pairColumns + " " + Self.pairJoin
                + " WHERE r.location_id = $1 AND h.valid_time - r.issued_at >= 0 AND h.valid_time - r.issued_at < $2",
            [.integer(location), .integer(LeadRule.maxSeconds)]
        ) { row in
            try summer.add(
                location: row.int64(0), model: summer.nameIndex(row.string(1)), source: summer.nameIndex(row.string(2)),
                issued: row.int64(3), valid: row.int64(4)
            ) { row.optionalDouble(5 + $0) }
        }
        var expected = SumsDelta()
        summer.flush(into: &expected)
        let count = SummarySums.columns.count
        let stored = try db.rows(
            "SELECT model, source, variable, lead_from_h, lead_to_h, valid_date, valid_from, valid_to, "
                + SummarySums.columns.map(\.name).joined(separator: ", ")
                + " FROM verification_summaries WHERE location_id = $1", [.integer(location)]
        ) { row -> (SummaryKey, SummarySums) in
            (
                SummaryKey(
                    location: location, model: row.string(0), source: row.string(1), variable: row.string(2),
                    leadFrom: Int(row.int64(3)), leadTo: Int(row.int64(4)), validDate: row.string(5),
                    validFrom: row.int64(6), validTo: row.int64(7)),
                SummarySums(values: (0..<count).map { row.optionalDouble(8 + $0) })
            )
        }
        try SumsAudit.compare(
            expected: expected, stored: stored, name: name, into: &check,
            pruned: { model, from, to in
                try self.prunedRuns(validBetween: from, and: to, locationID: location, model: model) > 0
            },
            repair: !repair
                ? nil
                : { key, fresh in
                    _ = try self.db.run(
                        """
                        DELETE FROM verification_summaries WHERE location_id = $1 AND source = $2 AND variable = $3
                          AND model = $4 AND lead_from_h = $5 AND valid_from = $6
                        """,
                        [
                            .integer(location), .text(key.source), .text(key.variable), .text(key.model),
                            .integer(Int64(key.leadFrom)), .integer(key.validFrom)
                        ])
                    if let (freshKey, group) = fresh {
                        var delta = SumsDelta()
                        delta.groups[freshKey] = group
                        try self.applySums(delta)
                    }
                })
    }
}

/// One location's observations by source, oldest first, for the persistence reference of an issue
/// time (`PersistenceReference`, as the engines' lookups fold it).
struct ObservationHistory {
    var bySource: [String: (times: [Int64], values: [[Double?]])] = [:]

    init(db: PostgresConnection, location: Int64) throws {
        let count = Variables.hourly.count
        try db.stream(
            "SELECT source, time, " + Variables.hourlyNames.joined(separator: ", ")
                + " FROM observations WHERE location_id = $1 ORDER BY source, time",
            [.integer(location)]
        ) { row in
            let source = row.string(0)
            bySource[source, default: ([], [])].times.append(row.int64(1))
            bySource[source, default: ([], [])].values.append((0..<count).map { row.optionalDouble(2 + $0) })
        }
    }

    func reference(source: String, issuedAt: Int64) -> [Double?] {
        var reference = PersistenceReference()
        guard let series = bySource[source] else { return reference.values }
        // The first index after `issuedAt`, then back while inside the hour before it.
        var low = 0
        var high = series.times.count
        while low < high {
            let middle = (low + high) / 2
            if series.times[middle] <= issuedAt { low = middle + 1 } else { high = middle }
        }
        var index = low - 1
        while index >= 0, PersistenceReference.covers(time: series.times[index], issuedAt: issuedAt) {
            if reference.takeOlder({ series.values[index][$0] }) { break }
            index -= 1
        }
        return reference.values
    }
}
