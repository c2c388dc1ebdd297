import WxCore

/// The persistence reference of a run for the skill score: per hourly variable, the latest non-NULL
/// observation of the source at or before the run's issue time and less than an hour before it,
/// carried forward to every lead. Issue times need not be whole hours (a run measured from its
/// first fetch) and station observations need not be hourly, so it is looked up, not computed. Each
/// engine reads the observations in `window` newest first and folds them here; the doctor folds the
/// rows it holds in memory the same way.
package struct PersistenceReference {
    /// How long before the issue time an observation may still be the reference (less than this).
    package static let window: Int64 = 3600

    /// Whether an observation at `time` may be the reference of a run issued at `issuedAt`.
    package static func covers(time: Int64, issuedAt: Int64) -> Bool {
        time <= issuedAt && time > issuedAt - window
    }

    /// The reference of each of `Variables.hourly`, nil where no observation in the window has it.
    package private(set) var values = [Double?](repeating: nil, count: Variables.hourly.count)

    package init() {}

    /// Takes the next older observation in the window (`value(i)` of `Variables.hourly[i]`); returns
    /// true once every variable has its reference, when no older observation can change it.
    package mutating func takeOlder(_ value: (Int) -> Double?) -> Bool {
        for index in values.indices where values[index] == nil { values[index] = value(index) }
        return !values.contains(where: { $0 == nil })
    }
}
