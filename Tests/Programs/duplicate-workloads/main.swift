import CalibrationWorkload
import MemHarness

// A harness that registers one workload twice: `MemHarness.main` must refuse the catalog with exit 64
// before it parses or runs anything (ExamplesTests spawns it).
MemHarness.main(workloads: [CalibrationWorkload(), CalibrationWorkload()])
