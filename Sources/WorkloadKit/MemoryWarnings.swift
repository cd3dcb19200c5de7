import Synchronization

#if os(Linux)
    import Glibc
#endif

/// Memory warnings for a running case: the sampler posts them, workloads handle them.
///
/// `post()` is what the sampler calls when the footprint reaches the warning level: it counts the
/// warning, bumps the `memoryWarnings` gauge (so the time line shows when it came) and wakes a
/// dedicated warning thread; it allocates nothing and never blocks, so the sampler never runs
/// workload code. The warning thread then calls every registered handler, in registration order.
/// A warning posted while no handler is registered is counted but delivered to no one.
public final class MemoryWarnings: Sendable {
    private let channel = Channel()
    private let dispatcherStarted = Mutex<Bool>(false)
    /// Warnings posted so far, sampled with memory (a step in the time line marks each warning).
    public let gauge = Gauge(name: "memoryWarnings")

    public init() {}

    deinit {
        channel.shutDown()
    }

    /// Registers `handler`, called on the warning thread (not the case's main thread) for every
    /// warning posted from now on. Handlers must be thread-safe; they may allocate.
    public func onWarning(_ handler: @escaping @Sendable () -> Void) {
        channel.handlers.withLock { $0.append(handler) }
        dispatcherStarted.withLock { started in
            guard !started else { return }
            started = channel.startDispatcher()
        }
    }

    /// Posts one warning. Allocates nothing and never blocks (safe on the sampler thread).
    public func post() {
        channel.posted.add(1, ordering: .relaxed)
        gauge.increment()
        if channel.listening.load(ordering: .acquiring) {
            sem_post(channel.semaphore)
        }
    }

    /// Warnings posted so far.
    public var postedCount: Int { channel.posted.load(ordering: .relaxed) }

    /// Warnings whose handlers have all returned.
    public var deliveredCount: Int { channel.delivered.load(ordering: .acquiring) }

    /// Drops every handler (and what they capture) and stops the warning thread, waiting for a
    /// delivery in progress. The harness calls this after teardown; later posts are only counted.
    public func end() {
        channel.handlers.withLock { $0.removeAll() }
        channel.shutDown()
    }
}

/// State shared between `MemoryWarnings` and its warning thread.
private final class Channel: @unchecked Sendable {
    // Safety: `semaphore` is initialised in init and destroyed in deinit, which runs only after the
    // warning thread was joined (`shutDown`) or never started; in between it is used only through
    // sem_post/sem_wait, which are thread-safe. Everything else is Atomic or Mutex.
    let semaphore: UnsafeMutablePointer<sem_t>
    let handlers = Mutex<[@Sendable () -> Void]>([])
    let listening = Atomic<Bool>(false)
    let stopping = Atomic<Bool>(false)
    let posted = Atomic<Int>(0)
    let delivered = Atomic<Int>(0)
    /// The warning thread once started.
    let dispatcher = Mutex<DedicatedThread?>(nil)

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Starts the warning thread; false if the system refused a thread.
    func startDispatcher() -> Bool {
        // Ended before any handler came: a thread would only wait for a post that never comes.
        guard !stopping.load(ordering: .acquiring) else { return false }
        listening.store(true, ordering: .releasing)
        let thread = DedicatedThread { [self] in dispatch() }
        guard let thread else {
            listening.store(false, ordering: .releasing)
            return false
        }
        dispatcher.withLock { $0 = thread }
        return true
    }

    /// The warning thread: waits for posts and calls the handlers, until shut down.
    private func dispatch() {
        while true {
            while sem_wait(semaphore) == -1 && errno == EINTR {}
            if stopping.load(ordering: .acquiring) { break }
            let current = handlers.withLock { $0 }
            for handler in current { handler() }
            delivered.add(1, ordering: .releasing)
        }
    }

    /// Stops the warning thread and waits for it (a delivery in progress finishes first).
    func shutDown() {
        listening.store(false, ordering: .releasing)
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = dispatcher.withLock { $0 }
        guard let thread else { return }
        sem_post(semaphore)
        thread.join()
    }
}
