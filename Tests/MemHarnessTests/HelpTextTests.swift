import HarnessModel
import Testing
import Verdicts

@testable import MemHarness

/// The wording the command line gives the model's rules: exit statuses, chart scales, baseline help.
struct HelpTextTests {
    @Test func everyExitStatusIsDocumentedWithItsCode() {
        let statuses: [HarnessModel.ExitStatus] = [
            .ok, .caseFailed, .finding, .usage, .ioError, .locked, .interrupted(signal: 2),
        ]
        #expect(
            HarnessModel.ExitStatus.documented.map(\.status)
                == statuses.map { status in
                    if case .interrupted = status { return .interrupted(signal: 0) }
                    return status
                })
        for row in HarnessModel.ExitStatus.documented {
            if case .interrupted = row.status {
                #expect(row.code == "128+N")
                for (signal, code) in [("SIGHUP", 129), ("SIGINT", 130), ("SIGTERM", 143)] {
                    #expect(row.meaning.contains("\(signal) \(code)"))
                    #expect(HarnessModel.ExitStatus.interrupted(signal: Int32(code - 128)).code == Int32(code))
                }
            } else {
                #expect(row.code == String(row.status.code), "\(row.status) is documented with another code")
            }
            #expect(HarnessModel.ExitStatus.summary.contains("\(row.code) \(row.meaning)"))
        }
    }

    @Test func chartScaleChoicesMapAutoToNoFixedScale() {
        #expect(ChartScaleChoice.allCases.map(\.rawValue) == ["auto", "linear", "log"])
        #expect(ChartScaleChoice.auto.scale == nil)
        #expect(ChartScaleChoice.linear.scale == .linear)
        #expect(ChartScaleChoice.log.scale == .log)
    }

    @Test func theHelpTextsNameTheOptionsTheyExplain() {
        for option in ["--floor", "--tolerance", "--fail-on-improvement", "baseline save"] {
            #expect(BaselinePolicy.explanation.contains(option), "\(option)")
        }
        for option in ["--noise-factor", "--min-tolerance", "--tolerance", "compare"] {
            #expect(ToleranceDerivation.explanation.contains(option), "\(option)")
        }
    }
}
