// A Swift program that stops on a runtime error, for the fault tests: it holds 1 MiB, waits long enough
// for the agent's sampler to see it, then calls `fatalError`, whose message a crashed case's row must carry.
#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

let held = [UInt8](repeating: 0xA5, count: 1 << 20)
usleep(200_000)
if held.count == 1 << 20 { fatalError("trap-probe stops here on purpose") }
print(held.count)
