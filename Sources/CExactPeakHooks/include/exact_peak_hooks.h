// Weak references to the exact-peak counters: they resolve when the executable links CExactPeak
// (`memharness-exact`) and stay NULL otherwise, so the harness can ask whether exact mode is here.
#ifndef MEMHARNESS_EXACT_PEAK_HOOKS_H
#define MEMHARNESS_EXACT_PEAK_HOOKS_H
#include <stdint.h>

/// One entry point of the malloc family exercised by `memharness_exact_hook_self_check`.
/// Byte figures are size-class bytes of the interposer's live count.
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
} memharness_exact_check_row;

/// 1 when this process counts every allocation exactly.
int memharness_exact_available(void);
/// Live size-class bytes, or -1 when exact mode is not linked in.
int64_t memharness_exact_hook_live_bytes(void);
/// High-water mark since the last reset (and resets it to live now), or -1.
int64_t memharness_exact_hook_take_peak(void);
/// Phase high-water mark since the last phase reset (and resets it to live now), or -1.
int64_t memharness_exact_hook_take_phase_peak(void);
/// Allocation calls counted so far, or -1.
int64_t memharness_exact_hook_allocation_count(void);
/// 1 when sizes of malloc/calloc are computed from jemalloc's size classes (checked against
/// nallocx at start-up), 0 when every allocation asks jemalloc (sallocx), -1 when not linked in.
int memharness_exact_hook_fast_size_classes(void);
/// 1 when malloc and free forward to jemalloc's own fast paths, 0 when they use mallocx/dallocx,
/// -1 when not linked in.
int memharness_exact_hook_forwards_to_fast_paths(void);
/// Calls every entry point of the malloc family (C and C++) once, plus a free on another thread,
/// and writes one row per call into `rows`; returns the rows written, or -1 when not linked in.
/// Run it while no other thread allocates: the figures are process-wide.
int memharness_exact_hook_self_check(memharness_exact_check_row *rows, int capacity);

#endif
