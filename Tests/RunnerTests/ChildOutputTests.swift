import Testing

@testable import Runner

/// The reason a crashed case's row gives, from what its process printed: the Swift runtime's fatal-error
/// message, else the process's own last lines, never the tail of the runtime's crash report.
@Suite struct ChildOutputTests {
    /// The Swift backtracer's report (Swift 6.3 on Linux), shortened: what follows a crash's own output.
    static let report = """

        *** Signal 6: Backtracing from 0x7fd0ef6a8eec... done ***

        *** Program crashed: Aborted at 0x0000000000003e25 ***

        Platform: x86_64 Linux (Debian GNU/Linux 12 (bookworm))

        Thread 0 "memharness" crashed:

          0  0x00007fd0ef6a8eec __pthread_kill_implementation + 268 in libc.so.6
        ...

        Registers:

        rax 0x0000000000000000  0

        Images (23 omitted):

        0x00007f108661e000–0x00007f10867990fc 93ac61ec5a8eb1396f9fbd350e3169a558528a40 libc.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6

        Backtrace took 0.02s

        """

    @Test func aFatalErrorGivesItsMessageAndPlace() {
        let output = ChildOutput(text: "trap_probe/main.swift:11: Fatal error: stops here\n" + Self.report)
        #expect(output.failureMessage == "Fatal error: stops here at main.swift:11")
    }

    @Test func anAbortGivesWhatTheProcessPrintedBeforeTheReport() {
        let output = ChildOutput(text: "opening the store\ncorrupt page 12 in store.db\n" + Self.report)
        #expect(output.failureMessage == "opening the store | corrupt page 12 in store.db")
    }

    @Test func anAbortThatPrintedNothingGivesTheReportsSummary() {
        #expect(ChildOutput(text: Self.report).failureMessage == "Program crashed: Aborted")
        // The runtime's own complaints while it gathers the backtrace are not the process's words.
        let complaint =
            "swift-runtime: failed to suspend thread 9530 while processing a crash; backtraces will be "
            + "missing information\n"
        #expect(ChildOutput(text: complaint + Self.report).failureMessage == "Program crashed: Aborted")
    }

    @Test func withoutAReportTheLastThreeLinesAreTheReason() {
        let output = ChildOutput(text: "one\ntwo\nthree\nfour\n")
        #expect(output.failureMessage == "two | three | four")
        #expect(ChildOutput(text: "").failureMessage == "")
    }
}
