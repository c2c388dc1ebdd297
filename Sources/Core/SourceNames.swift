/// Names of the observation sources wxdb writes itself, and what they are.
///
/// `analysis:<model>` holds the past hours of `<model>`'s own forecasts (what a response says
/// already happened), so each model's analysis is its own source and a model is never scored
/// against it. `era5` is a reanalysis and `current:<model>` a response's `current` block (the first
/// requested model's: Open-Meteo does not suffix it per model): model output as well, and a model is
/// not scored against its own either. `current` alone is what databases before migration 0013
/// stored. Station sources (any other name) are measurements.
public enum SourceNames {
    /// The prefix of a per-model analysis source.
    public static let analysisPrefix = "analysis:"
    /// What databases before migration 0012 called every analysis, whatever model it came from.
    public static let legacyAnalysis = "analysis"
    public static let era5 = "era5"
    public static let current = "current"
    /// The prefix of a per-model `current` source.
    public static let currentPrefix = "current:"

    /// The `current` source of the model a response's `current` block belongs to.
    public static func current(of model: String) -> String { currentPrefix + model }

    /// The model a per-model `current` source holds, or nil for any other source.
    public static func currentModel(_ source: String) -> String? {
        guard source.hasPrefix(currentPrefix), source.count > currentPrefix.count else { return nil }
        return String(source.dropFirst(currentPrefix.count))
    }

    /// Whether the source is a `current` block (per model or legacy).
    public static func isCurrent(_ source: String) -> Bool { source == current || currentModel(source) != nil }

    /// The analysis source of one model: `analysis:<model>`.
    public static func analysis(of model: String) -> String { analysisPrefix + model }

    /// The model an analysis source holds, or nil for any other source (and for a legacy `analysis`).
    public static func analysisModel(_ source: String) -> String? {
        guard source.hasPrefix(analysisPrefix), source.count > analysisPrefix.count else { return nil }
        return String(source.dropFirst(analysisPrefix.count))
    }

    /// Whether the source is an analysis (per model or legacy).
    public static func isAnalysis(_ source: String) -> Bool {
        source == legacyAnalysis || analysisModel(source) != nil
    }

    /// Whether a source's values come from a model rather than an instrument.
    public static func isModelDerived(_ source: String) -> Bool {
        isAnalysis(source) || source == era5 || isCurrent(source)
    }

    /// Whether scoring `model` against `source` would score it against its own output (its past
    /// hours or its current conditions).
    public static func isOwnAnalysis(source: String, model: String) -> Bool {
        analysisModel(source) == model || currentModel(source) == model
    }

    /// Names a user may not give an imported source: wxdb writes them itself.
    public static func isReserved(_ name: String) -> Bool {
        name == current || name.hasPrefix(currentPrefix) || isAnalysis(name) || name.hasPrefix(analysisPrefix)
    }

    /// The default-source rank: stations 0, then era5, then analyses, then current.
    public static func rank(_ source: String) -> Int {
        if source == era5 { return 1 }
        if isAnalysis(source) { return 2 }
        if isCurrent(source) { return 3 }
        return 0
    }

    /// A plain sentence saying the truth is model output, or nil for a station source.
    public static func modelDerivedNote(_ source: String) -> String? {
        if let model = analysisModel(source) {
            return
                "truth is \(source): model output (the past hours of \(model)'s own forecasts), not measurements; \(model) itself is not scored against it"
        }
        if source == legacyAnalysis {
            return
                "truth is analysis: model output (past hours of whichever model a fetch stored first, from before wxdb kept analysis per model), not measurements"
        }
        if source == era5 {
            return "truth is era5: a reanalysis (model output fitted to observations), not measurements"
        }
        if let model = currentModel(source) {
            return
                "truth is \(source): \(model)'s own current conditions (model output), not measurements; \(model) itself is not scored against it"
        }
        if source == current {
            return
                "truth is current: the current conditions of whichever model a fetch listed first (model output, from before wxdb kept them per model), not measurements"
        }
        return nil
    }
}
