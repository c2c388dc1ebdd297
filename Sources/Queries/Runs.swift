import WxCore
import WxStore

/// `wxdb query runs`: a location's runs in issue order.
public enum RunsQuery {
    /// The runs of `location` issued within `issued` (of `model` when given), oldest first.
    /// Throws `QueryError.noRuns` when the location has none at all.
    public static func runs(
        _ store: any Store, location: Location, issued: TimeRange = TimeRange(), model: String? = nil
    )
        throws -> [RunSummary]
    {
        try QuerySupport.requireRuns(store, location: location, model: model)
        return try store.runSummaries(
            locationID: location.id, model: model, issuedFrom: issued.from ?? .min, issuedTo: issued.to ?? .max)
    }
}
