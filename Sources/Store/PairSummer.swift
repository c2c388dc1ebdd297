import WxCore

/// Turns pairs (a forecast row and the observation at its hour) into summary groups: the lead
/// bucket, the location's local day, and the persistence reference of each run's issue time (looked
/// up once per issue time and source, through the engine's `reference`). Rows are summed under a key
/// of integers (one lookup per row, not one per variable with four strings hashed each: that was most
/// of an ingest's CPU) and become `SummaryKey`s in `flush`.
package struct PairSummer {
    /// The persistence reference of each of `Variables.hourly` at an issue time, for a location and
    /// source: the latest non-NULL observation of the source at or before it and less than an hour
    /// before it (as `persistenceReferences`).
    package typealias ReferenceLookup = (_ location: Int64, _ source: String, _ issuedAt: Int64) throws -> [Double?]

    let timezone: String
    let lookup: ReferenceLookup
    /// Pairs left out: an enclosing write keeps their sums (`SumsKeeping.enclosingWriteKeeps`).
    let keptOutside: [ObservationSpan]
    var days: [Int64: (date: String, start: Int64, end: Int64)] = [:]
    var lastDay: (date: String, start: Int64, end: Int64)?
    package struct ReferenceKey: Hashable {
        package var source: String
        package var issuedAt: Int64
    }
    /// The references looked up so far (a write that changes some drops them, to be looked up again).
    package var references: [ReferenceKey: [Double?]] = [:]
    /// A row's group of every scored variable: model and source as indices into `names`, the lead
    /// bucket's first hour, the local day's first instant.
    struct RowKey: Hashable {
        var location: Int64
        var model: Int
        var source: Int
        var leadFrom: Int
        var dayStart: Int64
    }
    var names: [String] = []
    var dayOf: [Int64: (date: String, end: Int64)] = [:]
    var leadTo: [Int: Int] = [:]
    /// Where each row key's groups start in `slots` (one slot per scored variable): the groups are
    /// summed in place, never copied in and out of a dictionary (a group is ~40 doubles).
    var pending: [RowKey: Int] = [:]
    var slots: [SumsDelta.Group?] = []
    /// Summary groups held (rows' keys times the scored variables).
    package var pendingGroups: Int { pending.count * Self.scored.count }
    /// The values of one pair: `Variables.hourly`'s forecasts, then its observations.
    package static let count = Variables.hourly.count
    static let scored: [(index: Int, observed: Int, variable: Variable)] = SummedPairs.variables.map { variable in
        (
            Variables.hourly.firstIndex(of: variable)!, Variables.hourly.firstIndex(of: variable.observedVariable)!,
            variable
        )
    }

    /// A summer for pairs of a location in `timezone` (its local days), leaving out the pairs of
    /// `keptOutside`, with the engine's persistence reference lookup.
    package init(timezone: String, keptOutside: [ObservationSpan], reference: @escaping ReferenceLookup) {
        self.timezone = timezone
        self.keptOutside = keptOutside
        self.lookup = reference
    }

    /// The local day holding `instant`.
    mutating func day(_ instant: Int64) -> (date: String, start: Int64, end: Int64) {
        if let last = lastDay, last.start <= instant, instant < last.end { return last }
        let hour = instant - ((instant % 3600) + 3600) % 3600
        if let day = days[hour] { return day }
        let date = ZoneTime.date(of: instant, timezone: timezone)
        let span = ZoneTime.span(ofDate: date, timezone: timezone) ?? (hour, hour + 3600)
        let day = (date: date, start: span.start, end: span.end)
        days[hour] = day
        lastDay = day
        return day
    }

    /// The persistence reference of each column at an issue time, looked up once per source and time.
    mutating func reference(location: Int64, source: String, issuedAt: Int64) throws -> [Double?] {
        let key = ReferenceKey(source: source, issuedAt: issuedAt)
        if let cached = references[key] { return cached }
        let values = try lookup(location, source, issuedAt)
        references[key] = values
        return values
    }

    /// The index of a model or source name in `names`.
    package mutating func nameIndex(_ name: String) -> Int {
        if let index = names.firstIndex(of: name) { return index }
        names.append(name)
        return names.count - 1
    }

    /// Adds one pair's sums: `model` and `source` are indices into `names`; `value(i)` is the
    /// forecast of `Variables.hourly[i]` for i < `count`, the observation of `Variables.hourly[i - count]` above.
    package mutating func add(
        location: Int64, model: Int, source: Int, issued: Int64, valid: Int64, value: (Int) -> Double?
    ) throws {
        guard let bucket = LeadBuckets.bucket(forLeadHours: Double(valid - issued) / 3600) else { return }
        let sourceName = names[source]
        // A model's own past hours are not a truth to score it against.
        if SourceNames.isOwnAnalysis(source: sourceName, model: names[model]) { return }
        if keptOutside.contains(where: {
            $0.contains(location: location, source: sourceName, issuedAt: issued, validTime: valid)
        }) {
            return
        }
        let day = day(valid)
        let key = RowKey(location: location, model: model, source: source, leadFrom: bucket.from, dayStart: day.start)
        let base: Int
        if let known = pending[key] {
            base = known
        } else {
            dayOf[day.start] = (day.date, day.end)
            leadTo[bucket.from] = bucket.to
            base = slots.count
            slots.append(contentsOf: repeatElement(nil, count: Self.scored.count))
            pending[key] = base
        }
        var reference: [Double?]?
        for (slot, (index, observedIndex, variable)) in Self.scored.enumerated() {
            guard let forecast = value(index), let observed = value(Self.count + observedIndex) else { continue }
            if reference == nil && !variable.isProbability {
                reference = try self.reference(location: location, source: sourceName, issuedAt: issued)
            }
            if slots[base + slot] == nil { slots[base + slot] = SumsDelta.Group() }
            slots[base + slot]!.sums.add(
                forecast: forecast, observed: observed,
                reference: variable.isProbability ? nil : reference?[observedIndex], variable: variable,
                threshold: SummedPairs.threshold)
            slots[base + slot]!.firstValid = min(slots[base + slot]!.firstValid ?? valid, valid)
            slots[base + slot]!.lastValid = max(slots[base + slot]!.lastValid ?? valid, valid)
        }
    }

    /// Moves the groups summed so far into `delta`.
    package mutating func flush(into delta: inout SumsDelta) {
        for (key, base) in pending {
            let groups = slots[base..<base + Self.scored.count]
            guard let day = dayOf[key.dayStart], let leadTo = leadTo[key.leadFrom] else { continue }
            for (slot, group) in zip(0..., groups) {
                guard let group else { continue }
                let summaryKey = SummaryKey(
                    location: key.location, model: names[key.model], source: names[key.source],
                    variable: Self.scored[slot].variable.name, leadFrom: key.leadFrom, leadTo: leadTo,
                    validDate: day.date, validFrom: key.dayStart, validTo: day.end)
                if var existing = delta.groups[summaryKey] {
                    existing.sums.merge(group.sums)
                    existing.firstValid = min(existing.firstValid ?? .max, group.firstValid ?? .max)
                    existing.lastValid = max(existing.lastValid ?? .min, group.lastValid ?? .min)
                    delta.groups[summaryKey] = existing
                } else {
                    delta.groups[summaryKey] = group
                }
            }
        }
        pending = [:]
        slots = []
    }
}

/// Pairs held in memory: keys, and each pair's forecast and observed values in one flat array (NaN
/// for NULL), `PairSummer.count` forecasts then as many observations each.
package struct PairRows {
    package var keys: [(location: Int64, model: String, source: String, issued: Int64, valid: Int64)] = []
    package var values: [Double] = []
    package static let width = 2 * PairSummer.count

    package init() {}

    /// Adds every pair held to `summer`.
    package func add(into summer: inout PairSummer) throws {
        for (row, key) in keys.enumerated() {
            let base = row * Self.width
            try summer.add(
                location: key.location, model: summer.nameIndex(key.model), source: summer.nameIndex(key.source),
                issued: key.issued, valid: key.valid
            ) { index in
                let value = values[base + index]
                return value.isNaN ? nil : value
            }
        }
    }
}

/// The forecasts of every run at the hours of an `ObservationSpan`, to be paired in memory with the
/// span's observations (read once for a write that changes only those observations).
package struct SpanForecasts {
    package let location: Int64
    package var models: [String] = []
    /// (index into `models`, issue time, valid time), with `PairSummer.count` values each in `values`.
    package var rows: [(model: Int, issued: Int64, valid: Int64)] = []
    package var values: [Double] = []

    package init(location: Int64) { self.location = location }

    /// Adds the pairs these forecasts make with `observations` (by hour, `PairSummer.count` values
    /// each, NaN for none).
    package func pair(with observations: [Int64: [Double]], source: String, into summer: inout PairSummer) throws {
        let sourceIndex = summer.nameIndex(source)
        let modelIndex = models.map { summer.nameIndex($0) }
        let count = PairSummer.count
        for (row, key) in rows.enumerated() {
            guard let observed = observations[key.valid] else { continue }
            let base = row * count
            try summer.add(
                location: location, model: modelIndex[key.model], source: sourceIndex, issued: key.issued,
                valid: key.valid
            ) { index in
                let value = index < count ? values[base + index] : observed[index - count]
                return value.isNaN ? nil : value
            }
        }
    }
}

/// `wxdb doctor --deep`'s comparison of a location's kept sums with the sums of its stored pairs.
package enum SumsAudit {
    /// A group's identity without its day's span or lead end (what the table's key holds).
    package struct Key: Hashable {
        package var model: String, source: String, variable: String, leadFrom: Int, validFrom: Int64
        package init(_ k: SummaryKey) {
            (model, source, variable, leadFrom, validFrom) = (k.model, k.source, k.variable, k.leadFrom, k.validFrom)
        }
    }

    /// Compares `expected` (the sums of the stored pairs) with `stored` (the kept rows) for the
    /// location `name`, adding to `check`. A group some of whose runs were pruned (`pruned`) is not
    /// checkable. Each differing group is passed to `repair`, when given, with the sums its pairs
    /// make (nil when they make none).
    package static func compare(
        expected: SumsDelta, stored: [(SummaryKey, SummarySums)], name: String, into check: inout SumsCheck,
        pruned: (_ model: String, _ validFrom: Int64, _ validTo: Int64) throws -> Bool,
        repair: ((_ key: SummaryKey, _ fresh: (SummaryKey, SumsDelta.Group)?) throws -> Void)?
    ) throws {
        var computed: [Key: (SummaryKey, SumsDelta.Group)] = [:]
        for (k, group) in expected.groups { computed[Key(k)] = (k, group) }
        let count = SummarySums.columns.count
        var kept: [Key: (SummaryKey, SummarySums)] = [:]
        for (k, sums) in stored { kept[Key(k)] = (k, sums) }
        var prunedAt: [String: Bool] = [:]
        let columns = SummarySums.columns
        for k in Set(computed.keys).union(kept.keys) {
            let summaryKey = computed[k]?.0 ?? kept[k]!.0
            let cacheKey = k.model + "\u{1}" + String(k.validFrom)
            let isPruned: Bool
            if let cached = prunedAt[cacheKey] {
                isPruned = cached
            } else {
                isPruned = try pruned(k.model, summaryKey.validFrom, summaryKey.validTo)
                prunedAt[cacheKey] = isPruned
            }
            if isPruned {
                check.notCheckable += 1
                continue
            }
            check.checked += 1
            // An absent score counts as zeros: subtracting every pair of a score leaves zeros, not NULL.
            let want = computed[k]?.1.sums.values ?? Array(repeating: nil, count: count)
            let have = kept[k]?.1.values ?? Array(repeating: nil, count: count)
            let differs = columns.indices.contains { index in
                let (a, b) = (want[index] ?? 0, have[index] ?? 0)
                // An overflowed sum (infinity, written before values were range-checked) compares
                // equal to nothing: `abs(a − ∞) > 1e-9·∞` is false, so it must be caught here.
                guard a.isFinite, b.isFinite else { return true }
                return columns[index].isCount ? a != b : abs(a - b) > 1e-9 * max(1, abs(a), abs(b))
            }
            guard differs else { continue }
            let day = summaryKey.validDate
            let what =
                "\(name), \(k.model), \(k.source), \(k.variable), lead \(k.leadFrom) h, \(day): kept n=\(kept[k].map { String($0.1.continuous.n) } ?? "none"), rows n=\(computed[k].map { String($0.1.sums.continuous.n) } ?? "none")"
            check.differing.append(what)
            if let repair {
                try repair(summaryKey, computed[k])
                check.repaired += 1
            }
        }
    }
}
