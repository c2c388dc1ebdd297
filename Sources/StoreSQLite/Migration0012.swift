import FoundationEssentials
import WxCore
import WxSQLite
import WxStore

// The part of migration 0012 only Swift can do (see Migrations/0012_*.sql): per-model analysis
// names, forecast and model-derived hours moved to the whole UTC hour Open-Meteo read them at, and
// the sums of the moved pairs moved with them. One location per transaction, so a large file is done
// in steps a crash can resume from (the location's row in migration_0012_pending goes with its step).

/// What finishing migration 0012 did, for tests and the migration note.
public struct Migration0012Outcome: Sendable, Equatable {
    public var locations = 0
    public var renamedAnalysisRows = 0
    /// Legacy `analysis` rows whose model the fetch log could not tell: left as `analysis`.
    public var unknownAnalysisRows = 0
    public var movedForecastHours = 0
    public var movedObservationHours = 0
}

extension SQLiteStore {
    /// Moves every location migration 0012 listed; a no-op once the list is empty.
    @discardableResult
    func finishMigration0012() throws -> Migration0012Outcome {
        var outcome = Migration0012Outcome()
        let pending = try db.rows("SELECT location_id FROM migration_0012_pending ORDER BY location_id", []) {
            $0.int64(0)
        }
        for location in pending {
            try db.transaction {
                try migrate0012(location: location, outcome: &outcome)
                try db.run("DELETE FROM migration_0012_pending WHERE location_id = ?", [.integer(location)])
            }
            outcome.locations += 1
        }
        return outcome
    }

    func migrate0012(location: Int64, outcome: inout Migration0012Outcome) throws {
        let id = SQLValue.integer(location)
        // The model each legacy analysis row came from: the first model its fetch stored (the
        // response's first model, whose past hours were kept), by the fetch's time.
        var firstModel: [Int64: String] = [:]
        for (at, model) in try db.rows(
            "SELECT attempted_at, model FROM fetch_log WHERE location_id = ? AND model IS NOT NULL AND outcome != 'failed' ORDER BY id",
            [id], { ($0.int64(0), $0.string(1)) })
        where firstModel[at] == nil {
            firstModel[at] = model
        }
        let models = try db.rows("SELECT DISTINCT model FROM forecast_runs WHERE location_id = ?", [id]) {
            $0.string(0)
        }
        let onlyModel = models.count == 1 ? models[0] : nil
        try db.execute(
            "CREATE TEMP TABLE IF NOT EXISTS analysis_models_0012 (recorded_at INTEGER PRIMARY KEY, model TEXT NOT NULL)"
        )
        try db.execute("DELETE FROM analysis_models_0012")
        let recorded = try db.rows(
            "SELECT DISTINCT recorded_at FROM observations WHERE location_id = ? AND source = 'analysis'", [id]
        ) { $0.int64(0) }
        for at in recorded {
            guard let model = firstModel[at] ?? onlyModel else { continue }
            try db.run(
                "INSERT INTO analysis_models_0012 (recorded_at, model) VALUES (?, ?)", [.integer(at), .text(model)])
        }
        let mapped = try db.rows(
            """
            SELECT t.model, count(*) FROM observations o LEFT JOIN analysis_models_0012 t ON t.recorded_at = o.recorded_at
            WHERE o.location_id = ? AND o.source = 'analysis' GROUP BY t.model
            """, [id]
        ) { (model: $0.optionalString(0), rows: $0.int(1)) }
        let single: String? = mapped.count == 1 ? mapped[0].model : nil
        let fractionalRuns = try db.rows(
            "SELECT id, utc_offset_seconds FROM forecast_runs WHERE location_id = ? AND utc_offset_seconds % 3600 != 0",
            [id]
        ) { (id: $0.int64(0), offset: $0.int64(1)) }
        let offHourObservations =
            try db.scalarInt(
                """
                SELECT count(*) FROM observations WHERE location_id = ? AND time % 3600 != 0
                  AND (source IN ('era5', 'analysis') OR source GLOB 'analysis:*')
                """, [id]) ?? 0

        func renameSummaries(to model: String) throws {
            try db.run(
                "UPDATE verification_summaries SET source = ? WHERE location_id = ? AND source = 'analysis'",
                [.text(SourceNames.analysis(of: model)), id])
            try db.run(
                "DELETE FROM verification_summaries WHERE location_id = ? AND source = ? AND model = ?",
                [id, .text(SourceNames.analysis(of: model)), .text(model)])
        }
        func renameObservations() throws {
            try db.run(
                """
                UPDATE observations SET source = 'analysis:' || (SELECT model FROM analysis_models_0012 t WHERE t.recorded_at = observations.recorded_at)
                WHERE location_id = ? AND source = 'analysis' AND recorded_at IN (SELECT recorded_at FROM analysis_models_0012)
                """, [id])
            outcome.renamedAnalysisRows += db.changes
            outcome.unknownAnalysisRows += Int(
                try db.scalarInt(
                    "SELECT count(*) FROM observations WHERE location_id = ? AND source = 'analysis'", [id])
                    ?? 0)
        }

        // Names only, one model: the pairs stay the same, so their sums are renamed, not recomputed
        // (a model's sums against its own analysis are dropped: they were never a score).
        if fractionalRuns.isEmpty, offHourObservations == 0, mapped.isEmpty || single != nil {
            if let single {
                try renameObservations()
                try renameSummaries(to: single)
            }
            return
        }

        // Otherwise the pairs change: the stored pairs' sums are taken away, the rows moved, and the
        // sums of the pairs they make now added back. Pruned runs' sums (their rows are gone) stay.
        var removed = SumsDelta()
        try sumPairs(ofLocation: location, into: &removed) { slice in
            var negated = SumsDelta()
            negated.subtract(slice)
            try self.applySums(negated)
        }
        var rest = SumsDelta()
        rest.subtract(removed)
        try applySums(rest)
        if let single { try renameSummaries(to: single) }
        try renameObservations()

        // Hours of runs fetched at an offset that is not whole hours: to the UTC hour they were read
        // at (the next whole hour east of UTC, the previous one west of it; `?2` says east). Only
        // times off the hour are moved, so the next hour is the floor plus an hour.
        for run in fractionalRuns {
            let east = SQLValue.integer(run.offset > 0 ? 1 : 0)
            try db.run(
                """
                UPDATE OR IGNORE hourly_forecasts
                SET valid_time = valid_time - ((valid_time % 3600) + 3600) % 3600 + CASE WHEN ?2 THEN 3600 ELSE 0 END
                WHERE run_id = ?1 AND valid_time % 3600 != 0
                """, [.integer(run.id), east])
            outcome.movedForecastHours += db.changes
            // An hour that met one already stored on the whole hour (a run continued across a DST
            // change) keeps the one read there.
            try db.run("DELETE FROM hourly_forecasts WHERE run_id = ? AND valid_time % 3600 != 0", [.integer(run.id)])
            try db.run(
                """
                UPDATE forecast_runs SET
                    first_valid_time = coalesce((SELECT min(valid_time) FROM hourly_forecasts WHERE run_id = ?1),
                        first_valid_time - ((first_valid_time % 3600) + 3600) % 3600
                        + CASE WHEN ?2 AND first_valid_time % 3600 != 0 THEN 3600 ELSE 0 END),
                    last_valid_time = coalesce((SELECT max(valid_time) FROM hourly_forecasts WHERE run_id = ?1),
                        last_valid_time - ((last_valid_time % 3600) + 3600) % 3600
                        + CASE WHEN ?2 AND last_valid_time % 3600 != 0 THEN 3600 ELSE 0 END),
                    hour_count = CASE WHEN pruned_at IS NULL THEN (SELECT count(*) FROM hourly_forecasts WHERE run_id = ?1) ELSE hour_count END
                WHERE id = ?1
                """, [.integer(run.id), east])
        }
        // Model-derived observations read under such an offset (analysis, ERA5) move the same way;
        // station and `current` times are true instants and stay.
        let zone = try db.scalarText("SELECT timezone FROM locations WHERE id = ?", [id]) ?? "UTC"
        let east =
            fractionalRuns.first.map { $0.offset > 0 }
            ?? (ZoneTime.offset(at: Int64(Date().timeIntervalSince1970), timezone: zone) >= 0)
        try db.run(
            """
            UPDATE OR IGNORE observations
            SET time = time - ((time % 3600) + 3600) % 3600 + CASE WHEN ?2 THEN 3600 ELSE 0 END
            WHERE location_id = ?1 AND time % 3600 != 0 AND (source IN ('era5', 'analysis') OR source GLOB 'analysis:*')
            """, [id, .integer(east ? 1 : 0)])
        outcome.movedObservationHours += db.changes
        try db.run(
            """
            DELETE FROM observations WHERE location_id = ? AND time % 3600 != 0
              AND (source IN ('era5', 'analysis') OR source GLOB 'analysis:*')
            """, [id])
        try rebuildSums(ofLocation: location)
    }
}
