import CSystem

/// The run's response to SIGINT, SIGTERM and SIGHUP: every running child group is killed at once, the
/// run stops before the next case, and it exits with 128 + the signal's number.
///
/// The children it kills are those `ChildProcess.spawn` registered and a wait has not yet reaped.
public enum Interruption {
    /// Installs the handlers (once per process, before the first case).
    public static func install() { memharness_interruption_install() }

    /// The signal that interrupted the run, if one did.
    public static var signal: Int32? {
        let value = memharness_interruption_signal()
        return value == 0 ? nil : value
    }
}
