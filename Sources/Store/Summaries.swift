import WxCore

/// The key of one row of `verification_summaries`: a location, model, source and variable, a lead
/// bucket and a local valid date, with the instants that date covered in the zone it was summarised in.
public struct SummaryKey: Hashable, Sendable {
    public var location: Int64
    public var model: String
    public var source: String
    public var variable: String
    public var leadFrom: Int
    public var leadTo: Int
    public var validDate: String
    /// The day's instants `[validFrom, validTo)` (part of the key: after a zone change the same
    /// date covers other hours).
    public var validFrom: Int64
    public var validTo: Int64

    public init(
        location: Int64, model: String, source: String, variable: String, leadFrom: Int, leadTo: Int, validDate: String,
        validFrom: Int64, validTo: Int64
    ) {
        self.location = location
        self.model = model
        self.source = source
        self.variable = variable
        self.leadFrom = leadFrom
        self.leadTo = leadTo
        self.validDate = validDate
        self.validFrom = validFrom
        self.validTo = validTo
    }
}

/// One stored summary row as `query verify` reads it.
public struct StoredSummary: Sendable {
    public var model: String
    public var leadFrom: Int
    public var leadTo: Int
    /// The location's local date, `YYYY-MM-DD`.
    public var validDate: String
    /// The instants the day covered when it was summarised, so it keeps meaning the same hours after
    /// the location's zone changes; nil for rows written before they were stored (migration 0006)
    /// whose zone has not changed since.
    public var span: (start: Int64, end: Int64)?
    /// The first and last valid hour among the row's pairs; nil on rows prune wrote without a span.
    public var firstValid: Int64?
    public var lastValid: Int64?
    public var sums: SummarySums

    /// A value with every field given (engines build these from their rows).
    public init(
        model: String, leadFrom: Int, leadTo: Int, validDate: String, span: (start: Int64, end: Int64)? = nil,
        firstValid: Int64? = nil, lastValid: Int64? = nil, sums: SummarySums
    ) {
        self.model = model
        self.leadFrom = leadFrom
        self.leadTo = leadTo
        self.validDate = validDate
        self.span = span
        self.firstValid = firstValid
        self.lastValid = lastValid
        self.sums = sums
    }
}

/// A run `Store.pruneBatch` is about to prune.
public struct PrunableRun: Sendable {
    public var id: Int64
    /// The run's location, where run ids count per location (PostgreSQL); nil where an id is unique.
    public var locationID: Int64?

    /// A value with every field given (engines build these from their rows).
    public init(id: Int64, locationID: Int64? = nil) {
        self.id = id
        self.locationID = locationID
    }
}

/// What one pruned batch removed.
public struct PruneBatch: Sendable, Equatable {
    public var runs = 0
    public var hourlyRows = 0
    public var dailyRows = 0

    public init(runs: Int = 0, hourlyRows: Int = 0, dailyRows: Int = 0) {
        self.runs = runs
        self.hourlyRows = hourlyRows
        self.dailyRows = dailyRows
    }
}

/// The summed stored summaries of one model and lead bucket (`Store.summaryTotals`).
public struct SummaryTotal: Sendable {
    public var model: String
    public var leadFrom: Int
    public var leadTo: Int
    /// The first and last valid hour among the pairs summed.
    public var firstValid: Int64
    public var lastValid: Int64
    public var sums: SummarySums

    /// A value with every field given (engines build these from their rows).
    public init(model: String, leadFrom: Int, leadTo: Int, firstValid: Int64, lastValid: Int64, sums: SummarySums) {
        self.model = model
        self.leadFrom = leadFrom
        self.leadTo = leadTo
        self.firstValid = firstValid
        self.lastValid = lastValid
        self.sums = sums
    }
}
