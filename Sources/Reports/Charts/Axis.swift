import HarnessModel

#if canImport(Glibc)
    import Glibc
#endif

/// A value axis: linear or logarithmic, with readable ticks in binary units (bytes) or plain numbers.
package struct ValueAxis {
    package enum Scale: String, Sendable {
        case linear, log
    }

    package let scale: Scale
    package let minimum: Double
    package let maximum: Double
    package let ticks: [Double]
    package let isBytes: Bool

    /// An axis covering 0 (or the log floor) to at least `maximum`.
    /// - Parameter integer: the values are whole numbers (counts), so ticks are too.
    package init(
        maximum rawMaximum: Double, minimumPositive: Double, scale: Scale, isBytes: Bool, integer: Bool = false
    ) {
        self.scale = scale
        self.isBytes = isBytes
        switch scale {
        case .linear:
            var (step, top) = Self.niceStep(maximum: max(rawMaximum, 1), isBytes: isBytes)
            if integer && step < 1 {
                step = 1
                top = max(1, rawMaximum.rounded(.up))
            }
            minimum = 0
            maximum = top
            ticks = stride(from: 0, through: top + step / 2, by: step).map { $0 }
        case .log:
            // Powers of 4 from just below the smallest positive value to just above the largest.
            let floor = max(minimumPositive, 1)
            var low = 1.0
            while low * 4 <= floor { low *= 4 }
            var high = low
            var marks = [low]
            while high < rawMaximum {
                high *= 4
                marks.append(high)
            }
            if marks.count < 2 {
                marks.append(high * 4)
                high *= 4
            }
            minimum = low
            maximum = high
            ticks = marks
        }
    }

    /// A step of 1, 2, 2.5 or 5 times a power of ten (or of 1024 for bytes) giving 4–8 ticks.
    static func niceStep(maximum: Double, isBytes: Bool) -> (step: Double, top: Double) {
        var unit = 1.0
        if isBytes {
            while maximum / unit >= 1024 { unit *= 1024 }
        }
        let scaled = maximum / unit
        var magnitude = 1.0
        while magnitude * 10 <= scaled { magnitude *= 10 }
        while magnitude > scaled && magnitude > 1e-9 { magnitude /= 10 }
        for multiplier in [0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10] {
            let step = multiplier * magnitude
            let count = (scaled / step).rounded(.up)
            if count <= 6 {
                return (step * unit, count * step * unit)
            }
        }
        return (magnitude * 10 * unit, (scaled / (magnitude * 10)).rounded(.up) * magnitude * 10 * unit)
    }

    /// Position of `value` in 0...1 along the axis (clamped: off-scale values sit on the edge).
    package func fraction(_ value: Double) -> Double {
        let result: Double
        switch scale {
        case .linear:
            result = maximum > minimum ? (value - minimum) / (maximum - minimum) : 0
        case .log:
            let clamped = max(value, minimum)
            result = log2(clamped / minimum) / log2(maximum / minimum)
        }
        // Values outside the axis (e.g. a net peak below baseline) are drawn at its edge rather than off the chart.
        return min(max(result, 0), 1)
    }

    package func label(_ value: Double) -> String {
        isBytes ? Self.compactBytes(value) : Self.compactNumber(value)
    }

    /// `0`, `512 B`, `1.5 MiB`, `64 MiB`: bytes without needless decimals.
    package static func compactBytes(_ value: Double) -> String {
        guard value != 0 else { return "0" }
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var scaled = abs(value)
        var index = 0
        while scaled >= 1024 && index < units.count - 1 {
            scaled /= 1024
            index += 1
        }
        let decimals = scaled == scaled.rounded() ? 0 : (scaled * 10 == (scaled * 10).rounded() ? 1 : 2)
        return (value < 0 ? "-" : "") + Units.fixed(scaled, decimals: decimals) + " " + units[index]
    }

    package static func compactNumber(_ value: Double) -> String {
        if abs(value) >= 1_000_000 {
            return Units.fixed(
                value / 1_000_000, decimals: value.truncatingRemainder(dividingBy: 1_000_000) == 0 ? 0 : 1) + "M"
        }
        if abs(value) >= 10_000 {
            return Units.fixed(value / 1000, decimals: value.truncatingRemainder(dividingBy: 1000) == 0 ? 0 : 1) + "k"
        }
        return Units.fixed(value, decimals: value == value.rounded() ? 0 : 2)
    }
}

/// Time axis ticks in seconds: 1, 2 or 5 times a power of ten.
func timeTicks(maximumSeconds: Double) -> [Double] {
    let target = max(maximumSeconds, 0.001)
    var step = 0.001
    let multipliers = [1.0, 2.0, 5.0]
    var index = 0
    while target / step > 8 {
        index += 1
        step = multipliers[index % 3] * pow10(index / 3) * 0.001
    }
    return stride(from: 0, through: target + step * 0.001, by: step).map { $0 }
}

private func pow10(_ exponent: Int) -> Double {
    var result = 1.0
    for _ in 0..<exponent { result *= 10 }
    return result
}

/// Seconds as tick labels: `0`, `0.5 s`, `2 s`.
func secondsLabel(_ seconds: Double) -> String {
    if seconds == 0 { return "0" }
    if seconds < 1 { return Units.fixed(seconds * 1000, decimals: 0) + " ms" }
    return Units.fixed(seconds, decimals: seconds == seconds.rounded() ? 0 : 1) + " s"
}
