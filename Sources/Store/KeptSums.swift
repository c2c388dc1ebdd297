import WxCore

// verification_summaries kept current at write time (issue #15), the engine-neutral part: which
// pairs a write touches, the deltas it adds, and who keeps them. Each engine reads the pairs and
// writes the deltas with its own SQL; the folding of pairs into groups is `PairSummer`.
//
// Why this shape:
// - One row per (location, model, source, variable, lead bucket, local valid day): the buckets are
//   `LeadBuckets` (what `query verify --by lead|model` shows; `--by day` merges them), the day is the
//   location's, so `--from/--to` given as dates select whole rows. Per lead hour x day would be as
//   many rows as pairs for a location-year: no faster than reading the pairs.
// - Every write that can create, change or remove pairs says which pairs it touches (a `PairScope`):
//   their sums are subtracted before the write and added after it, in the same transaction. That
//   one rule covers a new run, a run continued through a moved window (its new hours only), an
//   older copy that moves a run's issue time, a later or corrected observation, a better source, a
//   station file that clears values, and a time zone change; it never needs the pairs of pruned runs,
//   whose rows are gone but whose sums stay. Prune only deletes rows.
// - Sums are in stored (metric) units at the default threshold (0.1 mm), as prune kept them; imperial
//   is an affine change applied when reading. Plain doubles are enough: subtracting what was added
//   leaves an error of a few ulps of the group's sums (the proof test checks 1e-9 against the pairs).

/// Which pairs a write touches.
package enum PairScope {
    /// Every pair of one run (every source), or only those at `validTimes`.
    case run(Int64, validTimes: Set<Int64>?)
    /// The pairs of one source's observations valid in `[from, through]` (every run), and every pair
    /// of that source of the runs issued in `[from, through + 1 h)`, whose persistence reference
    /// those observations may be.
    case observations(location: Int64, source: String, from: Int64, through: Int64)
    /// Every pair of one location.
    case location(Int64)
}

/// One source's observations of a location valid in `[from, through]`: the hours of a
/// `PairScope.observations`.
package struct ObservationSpan: Sendable {
    package var location: Int64
    package var source: String
    package var from: Int64
    package var through: Int64

    package init(location: Int64, source: String, from: Int64, through: Int64) {
        self.location = location
        self.source = source
        self.from = from
        self.through = through
    }

    /// Whether a pair is in the span's `PairScope.observations`: at one of its hours, or of a run
    /// issued in `[from, through + 1 h)` (whose persistence reference its observations may be).
    package func contains(location: Int64, source: String, issuedAt: Int64, validTime: Int64) -> Bool {
        location == self.location && source == self.source
            && (from...through ~= validTime || (issuedAt >= from && issuedAt < through + PersistenceReference.window))
    }

    /// Whether the span covers another of the same location and source.
    package func covers(location: Int64, source: String, from: Int64, through: Int64) -> Bool {
        location == self.location && source == self.source && from >= self.from && through <= self.through
    }

    /// Whether a run issued at `issuedAt` may have one of the span's observations as its persistence
    /// reference (issued in `[from, through + 1 h)`).
    package func isReferenced(source: String, issuedAt: Int64) -> Bool {
        source == self.source && issuedAt >= from && issuedAt < through + PersistenceReference.window
    }
}

/// Sums to add to `verification_summaries`, with the valid hours their pairs span.
package struct SumsDelta {
    package struct Group {
        package var sums = SummarySums()
        package var firstValid: Int64?
        package var lastValid: Int64?

        package init(sums: SummarySums = SummarySums(), firstValid: Int64? = nil, lastValid: Int64? = nil) {
            self.sums = sums
            self.firstValid = firstValid
            self.lastValid = lastValid
        }
    }
    package var groups: [SummaryKey: Group] = [:]
    /// Whether some group may lose pairs (a subtracted delta is in it): groups may then be left empty.
    package var removes = false

    package init() {}

    /// Adds `other` with its sign flipped (what a write takes away).
    package mutating func subtract(_ other: SumsDelta) {
        for (key, group) in other.groups {
            let negated = SummarySums(values: group.sums.values.map { $0.map { -$0 } })
            groups[key, default: Group()].sums.merge(negated)
            removes = true
        }
    }

    /// What a write changed: the sums of its pairs after it minus those before it, and the groups that
    /// lost pairs (or their first or last hour), whose first and last valid hour are to be looked up
    /// again once the change is written.
    package static func change(from before: SumsDelta, to after: SumsDelta) -> (delta: SumsDelta, shrunk: [SummaryKey])
    {
        var delta = after
        let shrunk = before.groups.filter { key, old in
            guard let new = delta.groups[key] else { return true }
            return new.sums.continuous.n < old.sums.continuous.n || (new.firstValid ?? .max) > (old.firstValid ?? .max)
                || (new.lastValid ?? .min) < (old.lastValid ?? .min)
        }.keys
        delta.subtract(before)
        return (delta, Array(shrunk))
    }

    /// Whether a group's sums (`SummarySums.values`) are all zero or absent: the same pairs subtracted and added back, or a
    /// change that leaves nothing to write.
    package static func isUnchanged(_ values: [Double?]) -> Bool {
        values.allSatisfy { $0 == nil || $0 == 0 }
    }

    /// The groups that lost pairs and may now hold none (only those can be emptied).
    package var emptied: [SummaryKey] {
        guard removes else { return [] }
        return groups.filter { $0.value.sums.continuous.n < 0 }.map(\.key)
    }
}

/// Who keeps the sums of the pairs a write changes: the write itself, or a bulk write around it
/// that keeps them for its whole scope (once, instead of once per row or response it writes).
package enum SumsKeeping {
    /// Every write keeps the sums of the pairs it changes (outside any bulk write).
    case eachWrite
    /// The enclosing write keeps every pair's sums itself: the writes inside it keep none.
    case enclosingWrite
    /// The enclosing write keeps the sums of the pairs of these spans' observations; the writes
    /// inside it keep the others' and leave these out.
    case enclosingWriteKeeps([ObservationSpan])

    /// Whether the write running now keeps its pairs' sums itself.
    package var keepsSums: Bool {
        if case .enclosingWrite = self { return false }
        return true
    }

    /// The spans whose pairs' sums an enclosing write keeps (the writes inside leave them out).
    package var keptOutside: [ObservationSpan] {
        if case .enclosingWriteKeeps(let spans) = self { return spans }
        return []
    }
}
