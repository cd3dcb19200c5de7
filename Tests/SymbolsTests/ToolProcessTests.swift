import Glibc
import Testing

@testable import Symbols

/// The tool runner: input and output through files, a bounded wait without polling, the tool killed at the bound.
@Suite(.timeLimit(.minutes(1)))
struct ToolProcessTests {
    @Test func theToolReadsItsInputAndItsOutputIsReturned() throws {
        let output = try ToolProcess.run(
            executable: "/bin/cat", arguments: [], input: "one\ntwo\n", timeout: .seconds(30))
        #expect(output == "one\ntwo\n")
    }

    @Test func aFailingToolReportsItsStatusAndStderr() {
        let error = #expect(throws: SymbolsError.self) {
            try ToolProcess.run(
                executable: "/bin/sh", arguments: ["-c", "echo broken >&2; exit 3"], input: "", timeout: .seconds(30))
        }
        #expect(error == .toolFailed(executable: "/bin/sh", termination: .exited(3), stderr: "broken"))
    }

    @Test func aToolKilledByASignalSaysWhichSignal() {
        let error = #expect(throws: SymbolsError.self) {
            try ToolProcess.run(
                executable: "/bin/sh", arguments: ["-c", "kill -9 $$"], input: "", timeout: .seconds(30))
        }
        #expect(error == .toolFailed(executable: "/bin/sh", termination: .signaled(SIGKILL), stderr: ""))
        #expect(error?.description == "/bin/sh was killed by signal 9")
    }

    @Test func aToolPastItsBoundIsKilledAndReported() {
        let error = #expect(throws: SymbolsError.self) {
            try ToolProcess.run(executable: "/bin/sleep", arguments: ["30"], input: "", timeout: .milliseconds(200))
        }
        #expect(error == .toolTimedOut(executable: "/bin/sleep", after: .milliseconds(200)))
    }

    @Test func aMissingToolCannotStart() {
        let error = #expect(throws: SymbolsError.self) {
            try ToolProcess.run(executable: "/nonexistent/tool", arguments: [], input: "", timeout: .seconds(30))
        }
        #expect(error == .toolCouldNotStart(executable: "/nonexistent/tool", reason: "No such file or directory"))
    }
}
