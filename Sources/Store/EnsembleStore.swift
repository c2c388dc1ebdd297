import WxCore

/// One stored ensemble run's header.
public struct EnsembleRun: Sendable, Equatable {
    public var id: Int64
    public var locationID: Int64
    public var model: String
    public var issuedAt: Int64
    /// `model_run` (given by the caller) or `cadence` (the latest run on the model's cadence before the fetch).
    public var issuedAtSource: String
    public var fetchedAt: Int64
    public var firstValidTime: Int64
    public var hourCount: Int
    public var memberCount: Int

    /// A value with every field given (engines build these from their rows).
    public init(
        id: Int64, locationID: Int64, model: String, issuedAt: Int64, issuedAtSource: String, fetchedAt: Int64,
        firstValidTime: Int64, hourCount: Int, memberCount: Int
    ) {
        self.id = id
        self.locationID = locationID
        self.model = model
        self.issuedAt = issuedAt
        self.issuedAtSource = issuedAtSource
        self.fetchedAt = fetchedAt
        self.firstValidTime = firstValidTime
        self.hourCount = hourCount
        self.memberCount = memberCount
    }
}

/// Whether storing an ensemble run added it or found the same content already stored.
public enum EnsembleStoreOutcome: Sendable, Equatable {
    case stored(runID: Int64)
    case repeated(runID: Int64)

    public var runID: Int64 {
        switch self {
        case .stored(let id), .repeated(let id): id
        }
    }
}

/// Why an ensemble run could not be stored.
public enum EnsembleStoreError: Error, CustomStringConvertible, Equatable {
    case noValues(model: String)

    public var description: String {
        switch self {
        case .noValues(let model):
            "the Ensemble API's answer for \(model) holds no member values; nothing was stored (check the model name)"
        }
    }
}

/// The ensemble part of a store (issue 31): its own protocol so its requirements read apart, refined by ``Store``,
/// so every engine keeps ensembles.
public protocol EnsembleStore: AnyObject {
    /// Stores one model's members at `location`, whole or not at all: a new run, or `.repeated` when
    /// the same content is stored already. `issuedAt` is the initialisation time when a source gave
    /// it; nil estimates it from the model's cadence (`cadence` in the run's issued_at_source).
    func storeEnsemble(
        _ forecast: EnsembleForecast, grid: (latitude: Double, longitude: Double, elevation: Double?),
        for location: Location, issuedAt: Int64?, fetchedAt: Int64
    ) throws -> EnsembleStoreOutcome
    /// The ensemble runs of `model` at the location, oldest issue first.
    func ensembleRuns(locationID: Int64, model: String) throws -> [EnsembleRun]
    /// One run's members of `variable`: `[hour][member]`, NaN where missing; nil when the run has none.
    /// Run ids are the location's (as every key of a growing table, for PostgreSQL and Citus).
    func ensembleMembers(locationID: Int64, runID: Int64, variable: String) throws -> [[Float]]?
    /// The observed values of `variable` from `source` at the location in [from, to], by time.
    func observations(of variable: Variable, locationID: Int64, source: String, from: Int64, to: Int64) throws
        -> [Int64: Double]
    /// The ensemble sums kept at write time for these keys, one group per local day and lead bucket,
    /// for the days overlapping `[from, to]`; nil while the engine has not added older runs' sums yet.
    func ensembleGroups(locationID: Int64, model: String, variable: String, source: String, from: Int64, to: Int64)
        throws -> [EnsembleDayGroup]?
    /// How many ensemble runs `pruneEnsembleMembers` would prune.
    func prunableEnsembleRuns(issuedBefore cutoff: Int64) throws -> Int
    /// Deletes the members of the ensemble runs issued before `cutoff`, except each location and
    /// model's latest, keeping their sums; returns how many runs lost their members.
    func pruneEnsembleMembers(issuedBefore cutoff: Int64) throws -> Int
}

/// The compact member encoding: hour-major little-endian binary32, NaN for missing (4 bytes a value).
public enum MemberEncoding {
    public static func encode(_ rows: [[Double]], hours: Int, members: Int) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(hours * members * 4)
        for hour in 0..<hours {
            for member in 0..<members {
                let value = member < rows.count && hour < rows[member].count ? rows[member][hour] : .nan
                // One NaN pattern for every missing value, so equal content hashes equal.
                let bits = value.isFinite ? Float(value).bitPattern : Float.nan.bitPattern
                bytes.append(UInt8(truncatingIfNeeded: bits))
                bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
                bytes.append(UInt8(truncatingIfNeeded: bits >> 16))
                bytes.append(UInt8(truncatingIfNeeded: bits >> 24))
            }
        }
        return bytes
    }

    /// `[hour][member]` from a blob; nil when its length is not hours × members × 4.
    public static func decode(_ bytes: [UInt8], hours: Int, members: Int) -> [[Float]]? {
        guard hours >= 0, members > 0, bytes.count == hours * members * 4 else { return nil }
        return (0..<hours).map { hour in
            (0..<members).map { member in
                let i = (hour * members + member) * 4
                let bits =
                    UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3])
                    << 24
                return Float(bitPattern: bits)
            }
        }
    }
}
