// The control API of libmemharness-agent.so, the preloaded agent. The modes, the record and the sample
// stream are specified in the agent contract (notes/agent-contract.md); in short, from the environment:
//   MEMHARNESS_AGENT_EXACT=1                 count every allocation (live bytes, high-water marks, calls)
//   MEMHARNESS_AGENT_STACK_SAMPLE_BYTES=N    sample allocation stacks, one per N requested bytes on average
//                                            (implies EXACT: the `peak` snapshot follows the exact high-water mark)
//   MEMHARNESS_AGENT_SNAPSHOT_STEP=F         retake the `peak` snapshot F above the last (default 0.005, >= 64 KiB)
//   MEMHARNESS_AGENT_INTERVAL_NS=N + MEMHARNESS_AGENT_SAMPLES=PATH   a sampler thread writing jemalloc's stats
//   MEMHARNESS_AGENT_RECORD=PATH             write the record at exit (%p in a PATH: the process id; a forked
//                                            child writes its own only with %p, its figures counted from the fork)
//   MEMHARNESS_AGENT_ORIGIN_NS=N             CLOCK_MONOTONIC origin of the times written
//   MEMHARNESS_AGENT_HEAP=1                  track every live block with its allocation stack, for heap captures
//   MEMHARNESS_AGENT_HEAP_AT_EXIT=PATH       capture the heap at exit (%p as above; implies HEAP)
//
// Nothing links this library: the runner preloads it (LD_PRELOAD="libmemharness-agent.so libjemalloc.so.2")
// and the harness finds these functions with dlsym(RTLD_DEFAULT, ...). The header exists for the agent's own
// sources and for C programs that want the declarations; a Swift target importing it would not get the
// functions unless the process was started with the agent preloaded.
#ifndef MEMHARNESS_AGENT_H
#define MEMHARNESS_AGENT_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One entry point of the malloc family exercised by `memharness_agent_self_check`.
/// Byte figures are size-class bytes of the agent's live count.
typedef struct {
    /// The entry point, e.g. "posix_memalign" (a static string).
    const char *name;
    /// How far the live count should move on the call: the block's usable size (for realloc, new minus old).
    int64_t expected_delta_bytes;
    /// How far it did move.
    int64_t delta_bytes;
    /// How far the live count should move when the block is released (minus its usable size).
    int64_t expected_release_bytes;
    /// How far it did move.
    int64_t release_bytes;
    /// Allocation calls counted during the call (at least 1 for an allocating call).
    int64_t counted_calls;
} memharness_agent_check_row;

/// The version of this API: 2 (2 added `memharness_agent_capture_heap_fd` and a stack for every captured block). Each
/// file the agent writes names its own format and version in its first line (`memharness-agent-<kind> <version>`).
int memharness_agent_version(void);
/// Live size-class bytes now (every block of the malloc family, as `malloc_usable_size` counts it); -1 unless EXACT.
int64_t memharness_agent_live_bytes(void);
/// The high-water mark of the live bytes since the last call (restarted at the live bytes now), bytes; -1 unless EXACT.
int64_t memharness_agent_take_peak(void);
/// The same for the phase mark, which the harness restarts at each phase boundary; -1 unless EXACT.
int64_t memharness_agent_take_phase_peak(void);
/// Allocating calls counted so far; -1 unless EXACT.
int64_t memharness_agent_allocation_count(void);
/// 1 when malloc/calloc sizes come from jemalloc's size-class formula (checked against nallocx at start-up).
int memharness_agent_fast_size_classes(void);
/// 1 when the entry points forward to the allocator's own malloc, free... (jemalloc's or glibc's fast paths), 0 when
/// they use mallocx/dallocx (or glibc's __libc_malloc...).
int memharness_agent_forwards_to_fast_paths(void);
/// Which allocator serves malloc: 1 jemalloc (its extended API is loaded), 2 glibc's malloc, 0 not known yet.
int memharness_agent_allocator(void);
/// Calls every entry point of the malloc family (C and C++) once, plus a free on another thread and a
/// short-lived block for the high-water mark, and writes one row per call into `rows` (at most `capacity`);
/// returns the rows there are (may exceed `capacity`), or -1 unless EXACT. With stacks on, one more row
/// checks that a 16 MiB block moves the sampled live bytes by its weight. Run it while no other thread
/// allocates: the figures are process-wide.
int memharness_agent_self_check(memharness_agent_check_row *rows, int capacity);
/// 1 when allocation stacks are sampled (MEMHARNESS_AGENT_STACK_SAMPLE_BYTES > 0).
int memharness_agent_stacks_enabled(void);
/// Stores a labelled copy of the live set per stack (label: up to 63 bytes, spaces become '_'), with the
/// exact live bytes now as its level (0 unless EXACT, which stacks imply) and `time_ns` as given.
/// A label stored before is replaced. Storage is bounded (4,096 marks, 1 Mi rows in all): a mark that does not
/// fit is not stored, and the record counts it (`droppedMarks`).
void memharness_agent_mark(const char *label, int64_t time_ns);
/// At a case's baseline: forgets the peak snapshot; the next one is taken when the exact live bytes exceed
/// `level_bytes`. In EXACT mode also restarts the record's baseline and peak at the live bytes now.
void memharness_agent_restart_peak_snapshot(int64_t level_bytes);
/// Writes the caller's stack into `frames`: return addresses, innermost first (the first is where the
/// caller resumes after this call), at most `capacity` (clamped to 0...256); returns the count written.
/// A frame-pointer walk: it stops where the chain of frame pointers breaks.
int memharness_agent_capture_stack(uintptr_t *frames, int capacity);
/// Writes the record (text, see the contract) to `path` now (through `path`.tmp and a rename); 0 or an errno.
int memharness_agent_write_record(const char *path);

/// 1 when every live block is tracked (MEMHARNESS_AGENT_HEAP=1), so that heaps can be captured.
int memharness_agent_heap_enabled(void);
/// Live blocks in the table now; -1 unless the heap is tracked.
int64_t memharness_agent_heap_blocks(void);
/// Stops every other thread of the process (a signal each; a thread in a system call is interrupted and resumed),
/// writes every live block with its allocation stack, every pointer between live blocks and every root (module
/// globals, thread stacks, TLS and registers; of the calling thread, its frames from its caller up and its callee-saved
/// registers) to `path` (through `path`.tmp and a rename) in the capture format (HeapGraph's CaptureFile reader is its
/// specification), and resumes them. `label` (up to 63 bytes) names the capture. Captures of several threads wait
/// for each other.
/// Returns 0, or an errno with the reason in `memharness_agent_heap_failure`. Allocates nothing.
int memharness_agent_capture_heap(const char *path, const char *label);
/// The same capture, appended at the end of `fd` (a file the caller owns: the harness's have no name, so nothing is
/// left whatever ends the process; the capture's length is the file's growth). With `caller_frames` 1 the calling
/// thread's frames from its caller up and its callee-saved registers are roots (as `memharness_agent_capture_heap`
/// takes them); with 0 none of its frames is (its thread-local storage always is).
int memharness_agent_capture_heap_fd(int fd, const char *label, int caller_frames);
/// Arms the capture at the peak: from now on, the first release that finds the live blocks' bytes at least `margin`
/// (a fraction: 0.1 is 10%) and `minimum_step_bytes` above the last capture's level (at first, above the level now)
/// captures the heap into `fd`, truncated first (the file holds the latest capture only), before the block goes. The
/// calling thread's frames above the release are roots. 0, ENOTSUP without heap tracking, or EINVAL.
int memharness_agent_arm_peak_capture(int fd, double margin, int64_t minimum_step_bytes);
/// Disarms it (waiting for a capture in progress); the live bytes of the capture in the file, or -1 when there is
/// none (no high came past the first level, or the last capture failed). `peak_bytes`: the highest live blocks' bytes
/// seen while armed; `captures`: how many were taken (each replacing the one before); `capture_ns`: the time they took
/// together, nanoseconds.
int64_t memharness_agent_disarm_peak_capture(int64_t *peak_bytes, int64_t *captures, int64_t *capture_ns);
/// Marks the calling thread's allocations as the harness's own until the matching `_end` (nestable): never sampled,
/// and tracked without an allocation stack (no walk), so a harness naming and analysing captures in the process it
/// measures neither pays for stacks nor appears among the program's sites.
void memharness_agent_harness_begin(void);
void memharness_agent_harness_end(void);
/// Why the last capture failed (empty after a success); a static string.
const char *memharness_agent_heap_failure(void);

#ifdef __cplusplus
}
#endif

#endif
