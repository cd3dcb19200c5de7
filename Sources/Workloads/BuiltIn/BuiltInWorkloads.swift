import CalibrationWorkload
import ImageFeedWorkload
import LiveQueryWorkload
import StoreObserverWorkload
import SubscriptionsWorkload
import VersionPinningWorkload
import WorkloadKit

#if !os(Linux)
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// The workloads shipped with memharness, in the order `memharness list` shows them: the catalog the
/// `memharness` executable passes to `MemHarness.main(workloads:)`.
public enum BuiltInWorkloads {
    public static let all: [any Workload] = [
        CalibrationWorkload(),
        LiveQueryWorkload(),
        StoreObserverWorkload(),
        ImageFeedWorkload(),
        VersionPinningWorkload(), CompactionWorkload(),
        SubscriptionsWorkload(),
    ]

    /// The same list as a catalog.
    public static var catalog: WorkloadCatalog { WorkloadCatalog(all) }
}
