import MemHarnessCLI

MemHarness.main()
