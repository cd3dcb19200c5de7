import Attribution
import Symbols
import Testing

struct RecordTests {
    @Test func aRecordReadsIntoItsValue() throws {
        let record = try RecordFixture.record()
        #expect(record.processID == 4242)
        #expect(record.program == "/work/.build/debug/memharness")
        #expect(record.stackSampleBytes == 65536)
        #expect(
            record.exact
                == AgentRecord.Exact(
                    baselineLiveBytes: 1_048_576, peakLiveBytes: 150_000_000, allocationCalls: 2_000_000))
        #expect(record.modules.count == 6)
        #expect(record.stacks.map(\.id) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(record.stacks.filter(\.isTruncated).map(\.id) == [8])
        #expect(record.stacks[0].returnAddresses.first == 0x7f30_0000_1101)
        #expect(
            record.marks.map(\.label) == [
                "baseline", "iteration.churn.0", "iteration.churn.1", "iteration.churn.2",
                "iteration.churn.3", "peak", "end",
            ])
        #expect(record.mark("peak")?.live.count == 8)
        #expect(record.module(containing: 0x7f00_0010_0201)?.path == RecordFixture.swiftCore)
        #expect(record.module(containing: 0xdead_0001) == nil)
        try Golden.check(Golden.json(record), "fixture-record.json")
    }

    @Test func pathsKeepTheirSpaces() throws {
        let record = try AgentRecord.parse(
            """
            memharness-agent-record 1
            program /home/me/My Programs/app
            module 0x0 0x1000 0x2000 /home/me/My Programs/lib with space.so
            end
            """)
        #expect(record.program == "/home/me/My Programs/app")
        #expect(record.modules.first?.path == "/home/me/My Programs/lib with space.so")
    }

    @Test func unknownLineKindsAndBlankLinesAreSkipped() throws {
        let record = try AgentRecord.parse(
            "memharness-agent-record 1\n\nthreads 12 a b\nstackSampleBytes 4096\r\nend\n")
        #expect(record.stackSampleBytes == 4096)
    }

    @Test(arguments: [
        (
            "memharness-agent-record 1\nstack 1 0x10 1234\nend\n",
            "t.record:2: return address '1234' is not a hexadecimal address like 0x7f3a12c0"
        ),
        (
            "memharness-agent-record 1\nstack 1 0x10\nmark peak 5 100\nlive 2 10 1\nend\n",
            "t.record:4: live names stack 2, which is not written before it; stacks come before the marks that use them"
        ),
        (
            "memharness-agent-record 1\nlive 1 10 1\nend\n",
            "t.record:2: 'live' before any 'mark'; live lines belong to the mark above them"
        ),
        (
            "memharness-agent-record 1\nstack 1 0x10\nstack 1 0x20\nend\n",
            "t.record:3: stack 1 is written twice; stack ids are unique"
        ),
        (
            "memharness-agent-record 1\nmodule 0x0 0x2000 0x1000 /lib.so\nend\n",
            "t.record:2: module segment start 0x2000 is not below its end 0x1000"
        ),
        (
            "memharness-agent-record 1\nmodule 0x0 0x1000\nend\n",
            "t.record:2: 'module' needs 4 fields: module LOAD_BIAS START END PATH"
        ),
        (
            "memharness-agent-record 1\nstackSampleBytes lots\nend\n",
            "t.record:2: mean sampling interval 'lots' is not a whole number"
        ),
        (
            "memharness-agent-record 1\nmark peak 5 100\nlive 1 -4 1\nend\n",
            "t.record:3: live names stack 1, which is not written before it; stacks come before the marks that use them"
        ),
        (
            "memharness-agent-record 1\nstack 1 0x10\nmark peak 5 100\nlive 1 -4 1\nend\n",
            "t.record:4: live bytes '-4' is negative"
        ),
        (
            "memharness-agent-record 1\nend\npid 3\n",
            "t.record:3: 'pid' after the 'end' line; a record ends with 'end'"
        ),
        (
            "memharness-agent-record 1\ntruncated 9\nend\n",
            "t.record:2: truncated names stack 9, which is not written before it"
        ),
    ])
    func malformedLinesAreReportedWithTheirLineNumbers(text: String, message: String) {
        #expect(
            throws: AttributionError.malformedRecord(
                source: "t.record", line: Int(message.split(separator: ":")[1]) ?? 0,
                message: String(message.split(separator: ": ", maxSplits: 1)[1]))
        ) {
            try AgentRecord.parse(text, source: "t.record")
        }
        do {
            _ = try AgentRecord.parse(text, source: "t.record")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func aForeignOrNewerFileIsRefusedSayingWhatWasExpected() {
        do {
            _ = try AgentRecord.parse("memharness-agent-record 2\nend\n", source: "new.record")
            Issue.record("expected an error")
        } catch {
            #expect(error == .unsupportedRecordVersion(source: "new.record", version: "memharness-agent-record 2"))
            #expect(error.description.contains("expected 'memharness-agent-record 1'"))
        }
        #expect(throws: AttributionError.unsupportedRecordVersion(source: "x", version: "heap_v2/524288")) {
            try AgentRecord.parse("heap_v2/524288\n", source: "x")
        }
        #expect(throws: AttributionError.unsupportedRecordVersion(source: "x", version: "")) {
            try AgentRecord.parse("", source: "x")
        }
    }

    @Test func aRecordWithoutItsEndIsTruncated() {
        #expect(throws: AttributionError.truncatedRecord(source: "cut.record", lines: 3)) {
            try AgentRecord.parse("memharness-agent-record 1\nstack 1 0x10\nmark peak 1 2\n\n", source: "cut.record")
        }
    }
}
