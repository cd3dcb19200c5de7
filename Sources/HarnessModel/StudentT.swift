#if canImport(Glibc)
    import Glibc
#endif

/// Student's t distribution: the p-value of a difference measured in units of a noise that was itself estimated
/// from few runs. With 5 runs in two segments (3 degrees of freedom) a difference of 2.6 estimated σ is p 0.08,
/// not the normal 0.01: a short history is weak evidence, however flat its first runs look.
public enum StudentT {
    /// The two-sided p-value of `t` with `degreesOfFreedom` (at least 1): I_{ν/(ν+t²)}(ν/2, 1/2).
    public static func twoSidedPValue(_ t: Double, degreesOfFreedom: Int) -> Double {
        let v = Double(max(degreesOfFreedom, 1))
        guard t.isFinite else { return t.isNaN ? 1 : 0 }
        return regularizedIncompleteBeta(a: v / 2, b: 0.5, x: v / (v + t * t))
    }

    /// I_x(a, b) by its continued fraction (Numerical Recipes, 3rd ed., §6.4), on the side where it converges
    /// quickly.
    public static func regularizedIncompleteBeta(a: Double, b: Double, x: Double) -> Double {
        guard x > 0 else { return 0 }
        guard x < 1 else { return 1 }
        let logBeta: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let logFront: Double = logBeta + a * log(x) + b * log(1 - x)
        if x < (a + 1) / (a + b + 2) { return exp(logFront) * continuedFraction(a: a, b: b, x: x) / a }
        return 1 - exp(logFront) * continuedFraction(a: b, b: a, x: 1 - x) / b
    }

    /// The continued fraction of I_x(a, b) by the modified Lentz method; 200 terms are far more than a t
    /// p-value needs (it converges in under 20 for the values a change point tests).
    private static func continuedFraction(a: Double, b: Double, x: Double) -> Double {
        let tiny = 1e-300
        func guarded(_ value: Double) -> Double { abs(value) < tiny ? tiny : value }
        var c = 1.0
        var d = 1 / guarded(1 - (a + b) * x / (a + 1))
        var result = d
        for m in 1...200 {
            let m = Double(m)
            let even = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m))
            d = 1 / guarded(1 + even * d)
            c = guarded(1 + even / c)
            result *= d * c
            let odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m))
            d = 1 / guarded(1 + odd * d)
            c = guarded(1 + odd / c)
            let factor = d * c
            result *= factor
            if abs(factor - 1) < 3e-16 { break }
        }
        return result
    }
}
