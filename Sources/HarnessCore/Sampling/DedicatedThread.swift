#if canImport(Glibc)
import Glibc
#endif

/// An object whose `threadMain` runs on a detached thread of its own (the sampler, the warning thread).
protocol DedicatedThread: AnyObject {
    /// The thread's body; the object stays retained until it returns.
    func threadMain()
}

extension DedicatedThread {
    /// Starts a detached thread running `threadMain`; false if the system refused a thread.
    func startDedicatedThread() -> Bool {
        let context = Unmanaged.passRetained(self as AnyObject).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            // The context was retained for the thread; balance it when the body returns.
            guard let raw else { return nil }
            (Unmanaged<AnyObject>.fromOpaque(raw).takeRetainedValue() as? DedicatedThread)?.threadMain()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<AnyObject>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
