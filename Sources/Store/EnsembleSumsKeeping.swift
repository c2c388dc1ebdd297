import WxCore

// The engine-neutral half of storing ensembles (issue 31) that both engines share: a run's member
// blobs and content hash, the cadence estimate of its issue time, and the rule by which the kept
// ensemble sums follow every write (Core's EnsembleSumsFolder does the folding). An engine fills in
// ``EnsembleSumsKeeper``'s reads and its one write with its own SQL (StoreSQLite/EnsembleSums.swift,
// PostgresStore/EnsembleSums.swift); the order in which cases are folded is fixed here, so both
// engines keep the same bits.
//
// The rule is the deterministic sums' (KeptSums.swift): a write that changes ensemble cases takes
// their sums away before it and adds them after it, in the same transaction. A new run adds its
// cases; an observation write re-pairs the stored members at its hours (once as they were, once as
// they are); a time zone change moves the stored members' cases to the new zone's days. Cases of
// runs whose members prune deleted cannot be re-paired: their sums stay as they were (as the
// deterministic sums of pruned runs do).

/// What an engine stores of one ensemble forecast: one packable blob per variable and the hash
/// that finds the same content stored already.
package struct EnsembleRunContent {
    package var hours: Int
    package var members: Int
    package var firstValidTime: Int64
    /// (variable, ``MemberEncoding``'s raw bytes), in ``EnsembleModels/variables`` order.
    package var blobs: [(variable: String, raw: [UInt8])]
    /// FNV-1a over the model, the hours, the grid and the raw bytes: a run stored raw before packing
    /// still repeats.
    package var contentHash: Int64

    /// The content of `forecast`; throws when it holds no member value.
    package init(_ forecast: EnsembleForecast, grid: (latitude: Double, longitude: Double, elevation: Double?)) throws {
        members = forecast.memberCount
        hours = forecast.hourlyTimes.count
        guard members > 0, hours > 0, let first = forecast.hourlyTimes.first else {
            throw EnsembleStoreError.noValues(model: forecast.model)
        }
        firstValidTime = first
        let (hours, members) = (hours, members)
        blobs = zip(EnsembleModels.variables, forecast.values).compactMap { variable, rows in
            rows.map { (variable.name, MemberEncoding.encode($0, hours: hours, members: members)) }
        }
        var hash = FNV1a()
        for byte in forecast.model.utf8 { hash.add(byte) }
        for time in forecast.hourlyTimes { for k in 0..<8 { hash.add(UInt8(truncatingIfNeeded: time >> (8 * k))) } }
        for coordinate in [grid.latitude, grid.longitude, grid.elevation ?? .nan] {
            for k in 0..<8 { hash.add(UInt8(truncatingIfNeeded: coordinate.bitPattern >> (8 * k))) }
        }
        for (name, bytes) in blobs {
            for byte in name.utf8 { hash.add(byte) }
            hash.add(0)
            for byte in bytes { hash.add(byte) }
        }
        contentHash = Int64(bitPattern: hash.value)
    }
}

/// The issue time of an ensemble run no source gave.
public enum EnsembleIssue {
    /// How long after its start an ensemble run is taken to be served when nothing says: an assumption
    /// (global ensembles take hours to compute and post-process), not a documented figure.
    public static let assumedDelay: Int64 = 6 * 3600

    /// The latest run on the model's cadence at least ``assumedDelay`` before the fetch.
    public static func estimated(model: String, fetchedAt: Int64) -> Int64 {
        let cadence = Int64(EnsembleModels.model(named: model)?.cadenceHours ?? 1) * 3600
        let latest = fetchedAt - assumedDelay
        return latest - ((latest % cadence) + cadence) % cadence
    }
}

/// A stored ensemble run's hours: what the kept sums need of its header.
package struct EnsembleRunWindow {
    package var id: Int64
    package var location: Int64
    package var model: String
    package var issuedAt: Int64
    package var firstValidTime: Int64
    package var hourCount: Int
    package var memberCount: Int
    package var lastValidTime: Int64 { firstValidTime + Int64(hourCount - 1) * 3600 }

    package init(
        id: Int64, location: Int64, model: String, issuedAt: Int64, firstValidTime: Int64, hourCount: Int,
        memberCount: Int
    ) {
        self.id = id
        self.location = location
        self.model = model
        self.issuedAt = issuedAt
        self.firstValidTime = firstValidTime
        self.hourCount = hourCount
        self.memberCount = memberCount
    }

    /// The run's hours within `[from, through]`: the first one's index and time and how many; nil if none.
    /// Only the run's own hours count: an observation between two of them (a `current` block at
    /// 22:15) is no case of the run, as a deterministic forecast pairs only at its exact valid time.
    package func hours(from: Int64, through: Int64) -> (start: Int, first: Int64, count: Int)? {
        guard from <= lastValidTime, through >= firstValidTime else { return nil }
        let start = from <= firstValidTime ? 0 : Int((from - firstValidTime + 3599) / 3600)
        let end = through >= lastValidTime ? hourCount - 1 : Int((through - firstValidTime) / 3600)
        guard start <= end else { return nil }
        return (start, firstValidTime + Int64(start) * 3600, end - start + 1)
    }

    /// One variable's members at the run's hours within `[from, through]`, from its whole stored blob
    /// (either format); nil when no hour is in the span or the variable is not an ensemble one.
    package func slice(variable name: String, blob: [UInt8], from: Int64, through: Int64) throws -> EnsembleSlice? {
        guard let span = hours(from: from, through: through),
            let variable = EnsembleModels.variables.first(where: { $0.name == name })
        else { return nil }
        let all = try MemberBlob.values(blob, hours: hourCount, members: memberCount)
        return EnsembleSlice(
            model: model, issuedAt: issuedAt, variable: variable, firstTime: span.first, hours: span.count,
            members: memberCount,
            values: Array(all[(span.start * memberCount)..<((span.start + span.count) * memberCount)]))
    }
}

/// The members of one ensemble run and variable at a span of its hours.
package struct EnsembleSlice {
    package var model: String
    package var issuedAt: Int64
    package var variable: Variable
    /// The valid time of the slice's first hour.
    package var firstTime: Int64
    package var hours: Int
    package var members: Int
    /// Hour-major: `values[hour * members + member]`, NaN where missing.
    package var values: [Float]

    package init(
        model: String, issuedAt: Int64, variable: Variable, firstTime: Int64, hours: Int, members: Int, values: [Float]
    ) {
        self.model = model
        self.issuedAt = issuedAt
        self.variable = variable
        self.firstTime = firstTime
        self.hours = hours
        self.members = members
        self.values = values
    }

    func row(_ hour: Int) -> [Double] {
        (0..<members).map { Double(values[hour * members + $0]) }
    }
}

extension EnsembleSumsFolder {
    /// Folds the cases of `slices` against `observed` (per source, per hour, the values of
    /// ``EnsembleModels/variables``, NaN where missing), slice by slice and hour by hour: the order
    /// every engine adds them in. `including` leaves out hours an enclosing write keeps.
    package mutating func add(
        _ slices: [EnsembleSlice], observed: [String: [Int64: [Double]]], sign: Int,
        including: (Int64) -> Bool = { _ in true }
    ) {
        let columns = EnsembleModels.variables
        // Sources in a fixed order: each is its own group, but a fixed order keeps a fold repeatable.
        let sources = observed.keys.sorted()
        for slice in slices {
            guard let column = columns.firstIndex(of: slice.variable) else { continue }
            for hour in 0..<slice.hours {
                let time = slice.firstTime + Int64(hour) * 3600
                guard Self.bucket(issuedAt: slice.issuedAt, validTime: time) != nil, including(time) else { continue }
                var members: [Double]?
                for source in sources {
                    guard let y = observed[source]?[time]?[column], y.isFinite else { continue }
                    if members == nil { members = slice.row(hour) }
                    add(
                        model: slice.model, source: source, variable: slice.variable.name, issuedAt: slice.issuedAt,
                        validTime: time, members: members!, observed: y, sign: sign)
                }
            }
        }
    }
}

/// What an engine gives for its ensemble sums to be kept at write time: reads of its runs, members
/// and observations, and the write of a fold's groups. The rule itself is this protocol's extension.
package protocol EnsembleSumsKeeper: AnyObject {
    /// The location's ensemble runs whose hours overlap `[from, through]`, in the order they were stored.
    func ensembleRunWindows(location: Int64, from: Int64, through: Int64) throws -> [EnsembleRunWindow]
    /// A run's members of every variable at its hours within `[from, through]`, by variable name;
    /// none once prune deleted the run's members.
    func ensembleSlices(_ run: EnsembleRunWindow, from: Int64, through: Int64) throws -> [EnsembleSlice]
    /// One source's observations of the ensemble variables in `[from, to]`, NaN for NULL.
    func ensembleObservations(location: Int64, source: String, from: Int64, to: Int64) throws -> [Int64: [Double]]
    /// Every source's observations of the ensemble variables in `[from, to]`, NaN for NULL.
    func ensembleObservationsBySource(location: Int64, from: Int64, to: Int64) throws -> [String: [Int64: [Double]]]
    /// The location's time zone (its days key the groups).
    func locationTimezone(_ location: Int64) throws -> String
    /// The kept groups stored under these keys' primary keys (location, source, variable, model, day
    /// start, lead from), by the key asked for; a key with no row, or a row whose bytes do not fit the
    /// layout, is absent.
    func keptEnsembleGroups(_ keys: [EnsembleSumsKey]) throws -> [EnsembleSumsKey: EnsembleGroupSums]
    /// Writes each group as it is, in place of what is kept under its key; an empty group's row is removed.
    func writeEnsembleGroups(_ groups: [(key: EnsembleSumsKey, sums: EnsembleGroupSums)]) throws
}

extension EnsembleSumsKeeper {
    /// Runs `write` (which changes observations, or a location's time zone) keeping the ensemble sums
    /// of the cases in `scope` current; a new deterministic run (`.run`) changes none. Hours of the
    /// spans in `keptOutside` are left out: an enclosing write keeps them.
    package func keepingEnsembleSums<T>(_ scope: PairScope, keptOutside: [ObservationSpan], _ write: () throws -> T)
        throws -> T
    {
        switch scope {
        case .run:
            return try write()
        case .observations(let location, let source, let from, let through):
            let runs = try ensembleRunWindows(location: location, from: from, through: through)
            guard !runs.isEmpty else { return try write() }
            var slices: [EnsembleSlice] = []
            for run in runs { slices += try ensembleSlices(run, from: from, through: through) }
            let kept = keptOutside.filter { $0.location == location && $0.source == source }
            var folder = EnsembleSumsFolder(location: location, timezone: try locationTimezone(location))
            func foldNow(sign: Int) throws {
                let observed = try ensembleObservations(location: location, source: source, from: from, to: through)
                folder.add(slices, observed: [source: observed], sign: sign) { time in
                    !kept.contains { $0.from...$0.through ~= time }
                }
            }
            try foldNow(sign: -1)
            let result = try write()
            try foldNow(sign: 1)
            try applyEnsembleSums(folder)
            return result
        case .location(let location):
            let before = try locationTimezone(location)
            let result = try write()
            let after = try locationTimezone(location)
            guard before != after else { return result }
            for run in try ensembleRunWindows(location: location, from: .min, through: .max) {
                let slices = try ensembleSlices(run, from: .min, through: .max)
                let observed = try observationsOfRun(run)
                var folder = EnsembleSumsFolder(location: location, timezone: before)
                folder.add(slices, observed: observed, sign: -1)
                var moved = EnsembleSumsFolder(location: location, timezone: after)
                moved.add(slices, observed: observed, sign: 1)
                folder.merge(moved)
                try applyEnsembleSums(folder)
            }
            return result
        }
    }

    /// Adds a fold's groups to the kept sums: each group read, merged and written back (so the same
    /// additions happen in the same order on every engine); a group left with no case is removed,
    /// and a row whose bytes do not fit is rewritten from the change alone.
    package func applyEnsembleSums(_ folder: EnsembleSumsFolder) throws {
        guard !folder.groups.isEmpty else { return }
        let keys = folder.groups.keys.sorted(by: EnsembleSumsKey.storedOrder)
        let kept = try keptEnsembleGroups(keys)
        // Two keys of one stored row (days of two zones that start together, after a zone change)
        // merge into it one after the other, in key order.
        var written: [EnsembleSumsKey: (key: EnsembleSumsKey, sums: EnsembleGroupSums)] = [:]
        for key in keys {
            let row = key.storedRow
            var group = written[row]?.sums ?? kept[key] ?? EnsembleGroupSums(variable: key.variable)
            group.merge(folder.groups[key]!)
            written[row] = (key, group)
        }
        try writeEnsembleGroups(written.values.sorted { EnsembleSumsKey.storedOrder($0.key, $1.key) })
    }

    /// Adds the cases of a newly stored ensemble run (every source's observations at its hours).
    package func addEnsembleRunSums(_ run: EnsembleRunWindow) throws {
        let slices = try ensembleSlices(run, from: .min, through: .max)
        guard !slices.isEmpty else { return }
        var folder = EnsembleSumsFolder(location: run.location, timezone: try locationTimezone(run.location))
        folder.add(slices, observed: try observationsOfRun(run), sign: 1)
        try applyEnsembleSums(folder)
    }

    /// Every source's observations at a run's forecast hours (from its issue time on).
    func observationsOfRun(_ run: EnsembleRunWindow) throws -> [String: [Int64: [Double]]] {
        let from = max(run.issuedAt, run.firstValidTime)
        guard from <= run.lastValidTime else { return [:] }
        return try ensembleObservationsBySource(location: run.location, from: from, to: run.lastValidTime)
    }
}

extension EnsembleSumsKey {
    /// The stored row's primary key (location, source, variable, model, day start, lead from): the key
    /// with its day's and lead bucket's ends left out.
    package var storedRow: EnsembleSumsKey {
        var row = self
        row.dayEnd = 0
        row.leadTo = 0
        return row
    }

    /// The order groups are written and listed in: model, source, variable, day, lead.
    package static func storedOrder(_ a: EnsembleSumsKey, _ b: EnsembleSumsKey) -> Bool {
        if (a.location, a.model, a.source, a.variable) != (b.location, b.model, b.source, b.variable) {
            return (a.location, a.model, a.source, a.variable) < (b.location, b.model, b.source, b.variable)
        }
        return (a.dayStart, a.leadFrom, a.dayEnd) < (b.dayStart, b.leadFrom, b.dayEnd)
    }
}

/// What an engine gives for `doctor --deep` to check its kept ensemble sums against the members
/// (and with `--repair` to rewrite them).
package protocol EnsembleSumsAuditable: EnsembleSumsKeeper {
    /// The locations that have ensemble runs, by id.
    func ensembleLocations() throws -> [Int64]
    /// Every kept ensemble group of a location.
    func storedEnsembleGroups(location: Int64) throws -> [EnsembleSumsKey: EnsembleGroupSums]
    /// Runs the whole check in one transaction: a read-only snapshot, or with `repair` one that
    /// writes, in which no other write can change the members or the sums meanwhile.
    func ensembleAudit<T>(repair: Bool, _ body: () throws -> T) throws -> T
    /// Inside a repairing `ensembleAudit`, holds the location against other writers until it ends
    /// (before the location is read).
    func lockForEnsembleRepair(location: Int64) throws
}

extension EnsembleSumsAuditable {
    /// The kept ensemble sums compared with the sums of every stored member folded afresh (each
    /// count exactly, each sum to 1e-9 of its size: the kept sums were added and taken away write by
    /// write, in another order). A location and model with a pruned run is not checkable: its cases
    /// live only in the sums. With `repair`, each differing group of a checkable model is rewritten
    /// from the members (removed where the members have no case), in one transaction.
    package func checkEnsembleSums(repair: Bool = false) throws -> SumsCheck {
        try ensembleAudit(repair: repair) { try auditEnsembleSums(repair: repair) }
    }

    private func auditEnsembleSums(repair: Bool) throws -> SumsCheck {
        var check = SumsCheck()
        for location in try ensembleLocations() {
            if repair { try lockForEnsembleRepair(location: location) }
            let stored = try storedEnsembleGroups(location: location)
            var folder = EnsembleSumsFolder(location: location, timezone: try locationTimezone(location))
            var pruned: Set<String> = []
            for run in try ensembleRunWindows(location: location, from: .min, through: .max) {
                let slices = try ensembleSlices(run, from: .min, through: .max)
                if slices.isEmpty { pruned.insert(run.model) }
                folder.add(slices, observed: try observationsOfRun(run), sign: 1)
            }
            let keys = Set(stored.keys).union(folder.groups.keys).filter {
                stored[$0].map { !$0.isEmpty } ?? false || folder.groups[$0].map { !$0.isEmpty } ?? false
            }
            var rewritten: [(key: EnsembleSumsKey, sums: EnsembleGroupSums)] = []
            for key in keys.sorted(by: EnsembleSumsKey.storedOrder) {
                if pruned.contains(key.model) {
                    check.notCheckable += 1
                    continue
                }
                check.checked += 1
                let empty = EnsembleGroupSums(variable: key.variable)
                if !Self.same(stored[key] ?? empty, folder.groups[key] ?? empty) {
                    check.differing.append(
                        "ensemble \(key.model) \(key.source) \(key.variable) location \(location) day from "
                            + "\(UTCTime.format(key.dayStart)) lead \(key.leadFrom)–\(key.leadTo) h")
                    rewritten.append((key, folder.groups[key] ?? empty))
                }
            }
            if repair, !rewritten.isEmpty {
                try writeEnsembleGroups(rewritten)
                check.repaired += rewritten.count
            }
        }
        return check
    }

    static func same(_ a: EnsembleGroupSums, _ b: EnsembleGroupSums) -> Bool {
        func flat(_ g: EnsembleGroupSums) -> [Double] {
            g.columns + g.scores.rankCounts + (Binary64.decode(g.eventBytes) ?? [])
        }
        let (x, y) = (flat(a), flat(b))
        guard x.count == y.count else { return false }
        return zip(x, y).allSatisfy { abs($0 - $1) <= 1e-9 * max(1, abs($0), abs($1)) }
    }
}

/// The ensemble tables `stats` lists (both engines have them under these names).
public enum EnsembleTables {
    /// Run headers, members, kept sums: in that order.
    public static let names = ["ensemble_runs", "ensemble_values", "ensemble_summaries"]

    /// Each table's rows, counted by `count` (given a name of ``names``); none when no ensemble run is
    /// stored, so a database without ensembles reports what it always did.
    public static func counts(_ count: (String) throws -> Int64) throws -> [(table: String, rows: Int64)] {
        guard try count(names[0]) > 0 else { return [] }
        return try names.map { ($0, try count($0)) }
    }
}
