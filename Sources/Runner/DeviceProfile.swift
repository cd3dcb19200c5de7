import HarnessModel
import Measurement
import Scenarios
import WorkloadKit

/// A phone or tablet's memory budget for one app, to run cases as if on that device.
public struct DeviceProfile: Sendable, Hashable {
    /// The name `--device` takes, e.g. `iphone-6`.
    public var name: String
    /// The device, its RAM and the OS version the limit was measured on.
    public var summary: String
    /// The footprint at which the OS killed a foreground app, bytes.
    public var limitBytes: Int
    /// Where warnings are delivered, as a share of the limit.
    public var warningFraction: Double

    public init(name: String, summary: String, limitMiB: Int, warningFraction: Double = 0.8) {
        self.name = name
        self.summary = summary
        limitBytes = limitMiB << 20
        self.warningFraction = warningFraction
    }

    /// The budget this device gives a case measured by `footprint`.
    public func budget(footprint: FootprintMeasure) -> MemoryBudget {
        MemoryBudget(
            footprint: footprint, limitBytes: limitBytes,
            warningBytes: MemoryLevel.fractionOfLimit(warningFraction).bytes(limit: limitBytes))
    }
}

extension DeviceProfile {
    /// Where the limits come from: crash points that developers measured by allocating until iOS
    /// killed a test app, collected in the Stack Overflow answer
    /// https://stackoverflow.com/questions/5887248/ios-app-maximum-memory-budget/15200855#15200855
    /// ("crash amount / total RAM", in MB, read here as MiB). They are community measurements on
    /// particular OS versions, not Apple figures; the OS publishes no limits. The warning level
    /// (80% of the limit) is illustrative: iOS sends warnings "when memory use approaches the
    /// limit" without saying where.
    public static let source =
        "https://stackoverflow.com/questions/5887248/ios-app-maximum-memory-budget/15200855#15200855"

    /// The built-in profiles, smallest limit first.
    public static let builtIn: [DeviceProfile] = [
        DeviceProfile(name: "iphone-4s", summary: "iPhone 4s, 512 MB RAM", limitMiB: 286),
        DeviceProfile(name: "ipad-mini", summary: "iPad mini (1st generation), 512 MB RAM", limitMiB: 297),
        DeviceProfile(name: "iphone-6", summary: "iPhone 6, 1 GB RAM, iOS 8", limitMiB: 645),
        DeviceProfile(name: "iphone-7", summary: "iPhone 7, 2 GB RAM, iOS 10.2", limitMiB: 1395),
        DeviceProfile(name: "iphone-x", summary: "iPhone X, 3 GB RAM, iOS 11.2.1", limitMiB: 1392),
        DeviceProfile(name: "iphone-xr", summary: "iPhone XR, 3 GB RAM, iOS 12.1", limitMiB: 1792),
        DeviceProfile(name: "iphone-11", summary: "iPhone 11, 4 GB RAM, iOS 13.1.3", limitMiB: 2068),
    ]

    /// A built-in profile by name.
    public static func named(_ name: String) -> DeviceProfile? {
        builtIn.first { $0.name == name.lowercased() }
    }
}
