import Foundation
import Runner
import Testing

#if os(Linux)
    import Glibc
#endif

/// What a harness process does first, and its writes to the standard streams. A closed stdin, stdout or
/// stderr reopened on /dev/null is shown end to end by FaultTests (`>&-` against the built binary): closing
/// a descriptor of this test process would hand its number to whatever a test running beside opens next.
struct ProcessStartTests {
    @Test func ignoresSIGPIPEAndSIGXFSZAndLeavesOpenDescriptorsAlone() throws {
        #expect(ProcessStart.prepareStandardStreams() == 0, "stdin, stdout and stderr of the test process are open")
        for signal in [SIGPIPE, SIGXFSZ] {
            var action = sigaction()
            #expect(sigaction(signal, nil, &action) == 0)
            #expect(
                unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
                    == unsafeBitCast(SIG_IGN, to: Int.self))
        }
    }

    @Test func writesAllOfATextAndSaysWhenTheReaderIsGone() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let text = String(repeating: "memharness ", count: 1000) + "\n"  // several writes' worth for a small pipe
        let reader = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        #expect(ProcessStart.prepareStandardStreams() == 0)  // SIGPIPE ignored: a gone reader fails the write
        #expect(ProcessStart.write(text, to: ends[1]))
        close(ends[1])
        #expect(String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) == text)

        var gone: [Int32] = [0, 0]
        #expect(pipe(&gone) == 0)
        close(gone[0])
        #expect(!ProcessStart.write("lost\n", to: gone[1]))
        close(gone[1])
    }

    @Test func saysASignalAfterTheReportLeftTheReportComplete() {
        #expect(
            Interruption.afterReport(SIGTERM, folder: "Reports/latest")
                == "interrupted by SIGTERM after the report was written: Reports/latest holds the complete run")
    }
}
