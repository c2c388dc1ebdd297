import WxCore

/// What `wxdb doctor --deep` found comparing the kept sums with the sums recomputed from the rows.
public struct SumsCheck: Sendable, Equatable {
    /// Groups (location, model, source, variable, lead bucket, day) compared.
    public var checked = 0
    /// Groups some pruned run may have had pairs in: their rows are gone, so they cannot be recomputed.
    public var notCheckable = 0
    /// Groups whose kept sums differ from the rows', described for a user.
    public var differing: [String] = []
    /// Groups rewritten from the rows (with `repair`).
    public var repaired = 0

    /// A value with every field given (engines build these from their rows).
    public init(checked: Int = 0, notCheckable: Int = 0, differing: [String] = [], repaired: Int = 0) {
        self.checked = checked
        self.notCheckable = notCheckable
        self.repaired = repaired
        self.differing = differing
    }
}
