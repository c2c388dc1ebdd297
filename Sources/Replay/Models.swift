// The model runs the replay server knows: how often each model starts a run, how long after its
// initialisation a run can be had, and where the single-runs archive begins. One table serves the
// live forecast (each model's latest available run), the single-runs endpoint (which runs exist)
// and meta.json (what Open-Meteo says about the latest run), so the three always agree.

/// One model domain's run schedule, in seconds (Unix time for `archiveStart`).
public struct ReplayModel: Sendable, Equatable {
    /// The internal domain id used in `/data/<domain>/static/meta.json`.
    public let domain: String
    /// `update_interval_seconds`: runs start at 00 UTC and every `cadence` seconds after.
    public let cadence: Int
    /// How long after its initialisation a run becomes available.
    public let delay: Int
    /// The first run the single-runs archive holds.
    public let archiveStart: Int

    /// The single-runs archive keeps "only every full 3 hours" (open-meteo/open-meteo#2019).
    public static let archiveStep = 3 * 3600

    /// The newest run available at `now` (Unix seconds).
    public func latestRun(at now: Int) -> Int {
        Self.floor(now - delay, cadence)
    }

    /// The runs the single-runs archive has: on the cadence, on a full 3 hours.
    public func isArchived(_ run: Int) -> Bool {
        run >= archiveStart && run % cadence == 0 && run % Self.archiveStep == 0
    }

    static func floor(_ value: Int, _ step: Int) -> Int {
        let q = value / step
        return (value % step < 0 ? q - 1 : q) * step
    }
}

/// The models the replay server knows by domain, and `models=` names by their domain.
public enum ReplayModels {
    /// Most models' archive starts on 2026-04-02 ("Due to data corruption we removed data prior
    /// April 2nd", open-meteo/open-meteo#1969); ECMWF IFS HRES goes back to March 2024.
    public static let defaultArchiveStart = Civil.days(year: 2026, month: 4, day: 2) * 86400
    public static let ifsArchiveStart = Civil.days(year: 2024, month: 3, day: 1) * 86400

    private static func model(_ domain: String, every hours: Int, delay: Int, from start: Int = defaultArchiveStart)
        -> ReplayModel
    {
        ReplayModel(domain: domain, cadence: hours * 3600, delay: delay * 3600, archiveStart: start)
    }

    /// Cadences from Open-Meteo's model pages (finer than the forecast docs' table where they
    /// differ); delays as the single-runs docs give them: 4-6 h for global models, 1-3 h regional.
    public static let domains: [String: ReplayModel] = Dictionary(
        uniqueKeysWithValues: [
            model("dwd_icon", every: 6, delay: 4),
            model("dwd_icon_eu", every: 3, delay: 3),
            model("dwd_icon_d2", every: 3, delay: 2),
            model("ncep_gfs013", every: 6, delay: 5),
            model("ncep_gfs025", every: 6, delay: 5),
            model("ncep_hrrr_conus", every: 1, delay: 2),
            model("ecmwf_ifs", every: 6, delay: 6, from: ifsArchiveStart),
            model("ecmwf_ifs025", every: 6, delay: 6),
            model("ecmwf_aifs025_single", every: 6, delay: 6),
            model("cmc_gem_gdps", every: 6, delay: 5),
            model("jma_gsm", every: 3, delay: 5),
            model("jma_msm", every: 3, delay: 3),
            model("metno_nordic_pp", every: 1, delay: 1),
            model("meteofrance_arpege_world025", every: 1, delay: 4),
            model("meteofrance_arome_france0025", every: 1, delay: 2),
            model("ukmo_global_deterministic_10km", every: 1, delay: 5)
        ].map { ($0.domain, $0) })

    /// `models=` names and the domain whose runs they serve (the same table as wxdb's fetcher).
    public static let names: [String: String] = [
        "icon_seamless": "dwd_icon", "icon_global": "dwd_icon", "dwd_icon_seamless": "dwd_icon",
        "icon_eu": "dwd_icon_eu", "icon_d2": "dwd_icon_d2",
        "gfs_seamless": "ncep_gfs013", "gfs_global": "ncep_gfs013", "ncep_gfs_seamless": "ncep_gfs013",
        "gfs025": "ncep_gfs025", "ncep_hrrr_conus": "ncep_hrrr_conus", "gfs_hrrr": "ncep_hrrr_conus",
        "ecmwf_ifs": "ecmwf_ifs", "ecmwf_ifs025": "ecmwf_ifs025", "ecmwf_aifs025_single": "ecmwf_aifs025_single",
        "gem_seamless": "cmc_gem_gdps", "gem_global": "cmc_gem_gdps",
        "jma_seamless": "jma_gsm", "jma_msm": "jma_msm", "jma_gsm": "jma_gsm",
        "metno_nordic": "metno_nordic_pp", "metno_seamless": "metno_nordic_pp",
        "meteofrance_arpege_world": "meteofrance_arpege_world025",
        "meteofrance_arome_france": "meteofrance_arome_france0025",
        "ukmo_global_deterministic_10km": "ukmo_global_deterministic_10km"
    ]

    /// The schedule of a `models=` name, or nil for blends (`best_match`) and names it does not know.
    public static func model(named name: String) -> ReplayModel? {
        names[name].flatMap { domains[$0] }
    }
}
