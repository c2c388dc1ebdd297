/// A linear map from data values to pixels, over a domain widened to nice tick values.
public struct Scale: Sendable, Equatable {
    public var lower: Double
    public var upper: Double
    /// Pixel positions of `lower` and `upper` (upper may be the smaller one, as on a y axis).
    public var from: Double
    public var to: Double

    public init(lower: Double, upper: Double, from: Double, to: Double) {
        self.lower = lower
        self.upper = upper
        self.from = from
        self.to = to
    }

    /// The pixel of `value`.
    public func callAsFunction(_ value: Double) -> Double {
        guard upper != lower else { return (from + to) / 2 }
        return from + (value - lower) / (upper - lower) * (to - from)
    }
}

/// Tick values at "nice" numbers: 1, 2 or 5 times a power of ten.
public enum Ticks {
    /// A step of 1, 2 or 5 × 10ᵏ that cuts `span` into about `count` parts.
    public static func niceStep(span: Double, count: Int) -> Double {
        guard span.isFinite, span > 0, count > 0 else { return 1 }
        let raw = span / Double(count)
        var power = 1.0
        while power * 10 <= raw { power *= 10 }
        while power > raw { power /= 10 }
        let fraction = raw / power
        let nice: Double = fraction < 1.5 ? 1 : fraction < 3.5 ? 2 : fraction < 7.5 ? 5 : 10
        return nice * power
    }

    /// The domain `[lower, upper]` widened to whole steps, and the ticks in it (about `count`).
    /// An empty or single-valued range gets a span of one step around its value.
    public static func nice(lower: Double, upper: Double, count: Int = 5) -> (
        lower: Double, upper: Double, step: Double, ticks: [Double]
    ) {
        var lower = lower.isFinite ? lower : 0
        var upper = upper.isFinite ? upper : 1
        if lower > upper { swap(&lower, &upper) }
        if lower == upper {
            let pad = lower == 0 ? 1 : abs(lower) * 0.1
            lower -= pad
            upper += pad
        }
        let step = niceStep(span: upper - lower, count: count)
        let first = (lower / step).rounded(.down)
        let last = (upper / step).rounded(.up)
        // Steps below 1 as a whole number over a power of ten: 3 × 0.2 is 0.6000000000000001,
        // 3 × 2 / 10 is 0.6.
        var divisor = 1.0
        while step * divisor < 1 - 1e-9 && divisor < 1e12 { divisor *= 10 }
        let wholeStep = (step * divisor).rounded()
        var ticks: [Double] = []
        var k = first
        while k <= last && ticks.count < 100 {
            let tick = k * wholeStep / divisor
            ticks.append(tick == 0 ? 0 : tick)
            k += 1
        }
        return (first * wholeStep / divisor, last * wholeStep / divisor, step, ticks)
    }

    /// Ticks for a time axis (Unix seconds): whole hours or whole days in the frame of `offset`
    /// seconds east of UTC, at about `count` of them.
    public static func time(lower: Int64, upper: Int64, offset: Int, count: Int = 6) -> [Int64] {
        guard upper > lower else { return [lower] }
        let hour: Int64 = 3600
        let day = 24 * hour
        let steps: [Int64] = [1, 2, 3, 6, 12].map { $0 * hour } + [1, 2, 7, 14, 28, 56, 91, 182].map { $0 * day }
        let span = upper - lower
        let step = steps.first { span / $0 <= Int64(count) } ?? (span / Int64(count) / day + 1) * day
        let shift = Int64(offset)
        // The first step boundary at or after `lower`, in local time.
        let localLower = lower + shift
        var tick = (localLower + step - 1).floorDivided(by: step) * step - shift
        var ticks: [Int64] = []
        while tick <= upper && ticks.count < 100 {
            ticks.append(tick)
            tick += step
        }
        return ticks
    }
}

extension Int64 {
    /// Division rounding towards minus infinity (times before 1970 are negative).
    func floorDivided(by divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
