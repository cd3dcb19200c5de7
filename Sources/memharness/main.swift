import BuiltInWorkloads
import MemHarness

#if !os(Linux)
    #error("memharness builds on Linux only: it links jemalloc and reads /proc")
#endif

MemHarness.main(workloads: BuiltInWorkloads.all)
