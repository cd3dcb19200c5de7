extension CaseContext {
    /// Registers `handler` for the memory warnings of this case, as an app observes the OS's
    /// low-memory warning. The harness posts one when the footprint reaches the warning level of
    /// the run's memory budget (`--memory-warning`, `memoryWarning:`), once per crossing.
    ///
    /// The handler runs on the harness's warning thread, not on the case's main thread, so what it
    /// touches must be thread-safe (`NSCache` is; a cache of your own needs a lock). Handlers are
    /// dropped after teardown.
    public func onMemoryWarning(_ handler: @escaping @Sendable () -> Void) {
        memoryWarnings.onWarning(handler)
    }
}
