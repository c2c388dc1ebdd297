/// The lead rule for every pair wxdb scores or exports: 0 ≤ lead < 384 h (Open-Meteo's 16 forecast
/// days). `query verify`, `query trend`, `export pairs` and the default source's pairing apply it.
public enum LeadRule {
    /// The first lead, in hours, that is not scored.
    public static let maxHours = 384
    /// `maxHours` in seconds.
    public static let maxSeconds = Int64(maxHours) * 3600
}
