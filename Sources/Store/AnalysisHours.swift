import WxCore

// A forecast response's past hours are stored as observations, each model's as its own source (a
// model is never the truth it is scored against). Which hours those are, and the spans whose sums a
// batch of responses keeps once, are the same rule on every engine: the same writes in the same
// order then add the same bits to the sums.

/// The analysis hours of forecast responses: which hours a response stores as observations.
package enum AnalysisHours {
    /// The last hour of a response that is stored as an observation: the past is what was past for
    /// the server too, so a fetch time ahead of the response's own `current` time (a clock running
    /// ahead) must not turn forecast hours into observations.
    package static func through(_ response: ForecastResponse, fetch: FetchRecord) -> Int64 {
        min(fetch.fetchedAt, response.current?.time ?? fetch.fetchedAt)
    }

    /// The first and last hour a response stores as analysis observations, by source (one per model).
    package static func spans(_ response: ForecastResponse, fetch: FetchRecord) -> [String: ClosedRange<Int64>] {
        guard fetch.recordAnalysis else { return [:] }
        let last = Self.through(response, fetch: fetch)
        var spans: [String: ClosedRange<Int64>] = [:]
        for model in response.models {
            let hours = model.hourlyTimes.filter { $0 <= last }
            guard let low = hours.min(), let high = hours.max() else { continue }
            spans[SourceNames.analysis(of: model.model)] = low...high
        }
        return spans
    }

    /// The span of every analysis hour a batch of responses stores at `location`, one per source, by
    /// source. Many responses' past hours overlap (an archive imported with a later --fetched-at
    /// writes them again file after file): the sums of the pairs at those hours are kept once for
    /// the batch over these spans, not once per response.
    package static func spans(
        of batch: [(response: ForecastResponse, fetch: FetchRecord)], location: Int64
    ) -> [ObservationSpan] {
        var spans: [String: ClosedRange<Int64>] = [:]
        for (response, fetch) in batch {
            for (source, hours) in Self.spans(response, fetch: fetch) {
                let known = spans[source]
                spans[source] =
                    min(known?.lowerBound ?? .max, hours.lowerBound)...max(known?.upperBound ?? .min, hours.upperBound)
            }
        }
        return spans.sorted { $0.key < $1.key }.map {
            ObservationSpan(location: location, source: $0.key, from: $0.value.lowerBound, through: $0.value.upperBound)
        }
    }
}
