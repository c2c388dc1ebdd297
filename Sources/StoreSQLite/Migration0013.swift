import WxCore
import WxSQLite
import WxStore

// The part of migration 0013 only Swift can do (see Migrations/0013_*.sql): the circular sums of
// the direction groups kept before it, from their stored pairs.

extension SQLiteStore {
    /// Fills the direction sums of every location migration 0013 listed; a no-op once the list is
    /// empty. Returns the groups filled.
    @discardableResult
    func finishMigration0013() throws -> Int {
        let pending = try db.rows("SELECT location_id FROM migration_0013_pending ORDER BY location_id", []) {
            $0.int64(0)
        }
        var filled = 0
        for location in pending {
            try db.transaction {
                // Added, not set: `sumPairs` hands over a group in parts when it holds many.
                let update = try db.cachedStatement(
                    """
                    UPDATE verification_summaries SET direction_n = coalesce(direction_n, 0) + ?,
                      sum_sin_f = coalesce(sum_sin_f, 0) + ?, sum_cos_f = coalesce(sum_cos_f, 0) + ?,
                      sum_sin_o = coalesce(sum_sin_o, 0) + ?, sum_cos_o = coalesce(sum_cos_o, 0) + ?
                    WHERE location_id = ? AND source = ? AND variable = ? AND model = ? AND lead_from_h = ?
                      AND valid_from = ?
                    """)
                func apply(_ delta: SumsDelta) throws {
                    for (key, group) in delta.groups {
                        guard let d = group.sums.direction, d.n > 0 else { continue }
                        try update.bind([
                            .integer(Int64(d.n)), .real(d.sumSinF), .real(d.sumCosF), .real(d.sumSinO),
                            .real(d.sumCosO), .integer(key.location), .text(key.source), .text(key.variable),
                            .text(key.model), .integer(Int64(key.leadFrom)), .integer(key.validFrom)
                        ])
                        try update.runToCompletion()
                        filled += 1
                    }
                }
                var delta = SumsDelta()
                try sumPairs(ofLocation: location, into: &delta) { try apply($0) }
                try apply(delta)
                try db.run("DELETE FROM migration_0013_pending WHERE location_id = ?", [.integer(location)])
            }
        }
        return filled
    }
}
