// Lead-time buckets for `wxdb query verify` (docs/CLI.md): half-open [from, to) with edges
// 0, 6, 12, 24 and then every 24 hours up to 384 (Open-Meteo's 16 forecast days).

/// A half-open range of lead hours, `[from, to)`.
public struct LeadBucket: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// First lead hour in the bucket (inclusive).
    public var from: Int
    /// End of the bucket (exclusive).
    public var to: Int

    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }

    /// Whether a lead in hours falls in this bucket.
    public func contains(leadHours: Double) -> Bool {
        leadHours >= Double(from) && leadHours < Double(to)
    }

    /// Orders by start, then end.
    public static func < (lhs: LeadBucket, rhs: LeadBucket) -> Bool {
        (lhs.from, lhs.to) < (rhs.from, rhs.to)
    }

    /// `"[24, 48)"`.
    public var description: String { "[\(from), \(to))" }
}

/// The lead-time buckets wxdb reports verification scores in.
public enum LeadBuckets {
    /// The lead rule's limit (`LeadRule`): buckets end at it.
    public static let maxLeadHours = LeadRule.maxHours

    /// Bucket edges in hours: 0, 6, 12, 24, 48, 72, ..., 384.
    public static let edges: [Int] = [0, 6, 12] + Array(stride(from: 24, through: maxLeadHours, by: 24))

    /// Every bucket in order: [0, 6), [6, 12), [12, 24), [24, 48), ..., [360, 384).
    public static let all: [LeadBucket] = zip(edges, edges.dropFirst()).map { LeadBucket(from: $0, to: $1) }

    /// How tables, charts and notes name the bucket `[from, to)` h: `0–6 h`, `12–24 h`, `1–2 d`.
    public static func label(from: Int, to: Int) -> String {
        to <= 24 ? "\(from)–\(to) h" : "\(from / 24)–\(to / 24) d"
    }

    /// The bucket holding a lead of `leadHours` = (valid_time − issued_at) / 3600, which may be
    /// fractional (half-hour offsets give 5.5). `nil` for negative leads (not forecasts), leads of
    /// 384 hours or more, and NaN.
    public static func bucket(forLeadHours leadHours: Double) -> LeadBucket? {
        // 18 buckets: a linear scan over the single list of edges beats keeping a second formula in sync.
        for bucket in all where bucket.contains(leadHours: leadHours) { return bucket }
        return nil
    }
}
