import CalibrationWorkload
import HarnessCore
import ImageFeedWorkload
import LiveQueryWorkload
import StoreObserverWorkload
import SubscriptionsWorkload
import VersionPinningWorkload

extension WorkloadCatalog {
    /// Every workload shipped with memharness, in the order `memharness list` shows them.
    public static let builtIn = WorkloadCatalog([
        CalibrationWorkload(),
        LiveQueryWorkload(),
        StoreObserverWorkload(),
        ImageFeedWorkload(),
        VersionPinningWorkload(), CompactionWorkload(),
        SubscriptionsWorkload(),
    ])
}
