import CalibrationWorkload
import HarnessCore
import SubscriptionsWorkload

extension WorkloadCatalog {
    /// Every workload shipped with memharness, in the order `memharness list` shows them.
    public static let builtIn = WorkloadCatalog([
        CalibrationWorkload(),
        SubscriptionsWorkload(),
    ])
}
