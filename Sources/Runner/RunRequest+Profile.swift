import HarnessModel
import Scenarios

extension RunRequest {
    /// The run of `memharness profile`: `invocation` as the only scenario, named `name` (default: the
    /// program's file name), run `repetitions` times, each run limited to `timeout`; no file is read.
    public static func profiling(
        _ invocation: ProgramInvocation, name: String? = nil, repetitions: Int = 1, timeout: Duration = .seconds(600),
        options: RunOptions = RunOptions()
    ) -> RunRequest {
        var request = RunRequest()
        let programName = invocation.executable.split(separator: "/").last.map(String.init) ?? "program"
        request.inlineScenarios = [
            .program(invocation, name: name ?? programName, repetitions: repetitions, timeout: timeout)
        ]
        request.options = options
        return request
    }
}
