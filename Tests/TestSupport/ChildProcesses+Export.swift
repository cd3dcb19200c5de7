// `ChildRun` (a bounded run of a program whose output is kept) lives in ChildProcesses beside `ChildProcess`; every
// test target that imports TestSupport starts its children with it.
@_exported import ChildProcesses
