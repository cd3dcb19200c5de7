import JSONCacheWorkload
import MemHarness

MemHarness.main(workloads: [JSONCacheWorkload()])
