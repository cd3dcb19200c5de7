import Synchronization
import TestSupport
import Testing
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// Memory warnings: handlers off the posting thread, once per post, dropped at the end.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct MemoryWarningsTests {
    final class Witness: Sendable {}

    @Test func handlersRunOnTheWarningThreadOncePerPost() {
        let warnings = MemoryWarnings()
        let calls = Mutex<[Bool]>([])
        let poster = pthread_self()
        warnings.onWarning { calls.withLock { $0.append(pthread_equal(pthread_self(), poster) != 0) } }
        warnings.onWarning { calls.withLock { $0.append(pthread_equal(pthread_self(), poster) != 0) } }
        for _ in 0..<3 { warnings.post() }
        #expect(waitUntil { warnings.deliveredCount >= 3 }, "the warnings were never delivered")
        #expect(
            calls.withLock { $0 } == Array(repeating: false, count: 6),
            "two handlers × three warnings, never on the poster's thread")
        #expect(warnings.gauge.value == 3)
        warnings.end()
    }

    @Test func endDropsTheHandlersAndWhatTheyCapture() {
        let warnings = MemoryWarnings()
        weak var weakWitness: Witness?
        do {
            let witness = Witness()
            weakWitness = witness
            warnings.onWarning { _ = witness }
        }
        #expect(weakWitness != nil, "the handler keeps what it captures alive")
        warnings.end()
        #expect(weakWitness == nil)
        warnings.post()
        #expect(warnings.postedCount == 1 && warnings.deliveredCount == 0, "after the end, warnings are only counted")
    }
}
