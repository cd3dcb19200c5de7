// leak-fixtures: a harness of one workload, `leak-fixture` (Tests/TestSupport/LeakFixtureWorkload.swift), whose
// strategies leave the heap in states known by construction: `cycle` drops a ring of three objects, `clean` a chain.
//
//   leak-fixtures program STRATEGY    the strategy's work as a plain program, for `memharness profile -- ...`
//   leak-fixtures ARGUMENTS...        the harness's command line (`run`, and the case processes it starts)
//
// MemHarnessTests/LeakVerdictAcrossPathsTests runs both and `expectMemory(of:)` on the same workload.
import Foundation
import MemHarness
import TestSupport

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "program" {
    guard arguments.count == 2, ["cycle", "clean"].contains(arguments[1]) else {
        FileHandle.standardError.write(Data("usage: leak-fixtures program cycle|clean\n".utf8))
        exit(64)
    }
    LeakFixture.build(arguments[1])
    exit(0)
}
MemHarness.main(workloads: [LeakFixtureWorkload()])
