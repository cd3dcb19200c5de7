/// The scenarios the faults are injected into: small and fast (the calibration workload, or `sleep` as a
/// command), so the suite runs in seconds.
enum Scenarios {
    /// Two short cases (about half a second in all): the run that completes, or the previous report.
    static let quick = """
        scenario: fault-quick
        workload: calibration
        parameters:
          holdSize: 1MiB
          churnOperations: 2000
        strategies: [hold-large, churn]
        steps:
          - allocate
          - idle: 20ms
          - release
        repetitions: 1
        settle: 0ms

        """

    /// One case that idles for `seconds`: a run that is inside a case for as long as a fault needs.
    static func slow(seconds: Int = 20, timeout: String = "120s") -> String {
        """
        scenario: fault-slow
        workload: calibration
        parameters:
          holdSize: 1MiB
        strategies: [hold-large]
        steps:
          - allocate
          - idle: \(seconds)s
          - release
        repetitions: 1
        timeout: \(timeout)
        settle: 0ms

        """
    }

    /// Two cases sampled every 100 us, for `--samples-max-rows 0`: a report of a few hundred KiB, whose write
    /// lasts long enough to be hit.
    static let heavy = """
        scenario: fault-heavy
        workload: calibration
        parameters:
          holdSize: 1MiB
          churnOperations: 2000
        strategies: [hold-large, churn]
        steps:
          - allocate
          - idle: 500ms
          - release
        repetitions: 1
        interval: 100us
        settle: 0ms

        """

    /// A command case: a shell that starts `sleep` and waits for it, so the case has a child of its own.
    static func shell(_ script: String, name: String = "shell") -> String {
        """
        scenario: fault-command
        workload: command
        strategies:
          - name: \(name)
            command: [/bin/sh, -c, "\(script)"]
        repetitions: 1
        settle: 0ms

        """
    }
}
