import WxCore
import WxSQLite
import WxStore

// `wxdb doctor --deep`: the kept sums compared with (and, with --repair, rewritten from) the sums of
// the stored pairs; the comparison itself is WxStore's `SumsAudit`.

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
        let count = SummarySums.columns.count
        let stored = try db.rows(
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
        try SumsAudit.compare(
            expected: expected, stored: stored, name: name, into: &check,
            pruned: { model, from, to in
                try self.prunedRuns(validBetween: from, and: to, locationID: location, model: model) > 0
            },
            repair: !repair
                ? nil
                : { key, fresh in
                    try self.db.run(
                        """
                        DELETE FROM verification_summaries WHERE location_id = ? AND source = ? AND variable = ? AND model = ?
                          AND lead_from_h = ? AND valid_from = ?
                        """,
                        [
                            .integer(location), .text(key.source), .text(key.variable), .text(key.model),
                            .integer(Int64(key.leadFrom)), .integer(key.validFrom)
                        ])
                    if let (fresh, group) = fresh {
                        var delta = SumsDelta()
                        delta.groups[fresh] = group
                        try self.applySums(delta)
                    }
                })
        check.differing.sort()
    }
}
