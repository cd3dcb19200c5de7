import Synchronization

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// A thread of its own for a long-running loop (the sampler, the memory-warning dispatcher),
/// started once and joined once: the owner waits for it with `join()`, never by polling.
package final class DedicatedThread: Sendable {
    /// The thread until it is joined; nil afterwards.
    private let handle: Mutex<pthread_t?>

    /// Starts a thread running `body`; nil when the system refused a thread.
    package init?(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { raw in
                // The box was retained for the thread; the thread releases it when the body returns.
                guard let raw else { return nil }
                Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
                return nil
            }, box)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            return nil
        }
        handle = Mutex(thread)
    }

    /// Waits for the thread's body to return. Later calls return at once.
    package func join() {
        let thread = handle.withLock { handle -> pthread_t? in
            defer { handle = nil }
            return handle
        }
        guard let thread else { return }
        // Only the owner joins, once, and never from the thread itself: EDEADLK and ESRCH cannot happen.
        _ = pthread_join(thread, nil)
    }

    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
