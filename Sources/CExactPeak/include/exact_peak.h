// Exact peak accounting: an interposed malloc family that forwards to jemalloc and keeps a
// process-wide count of live size-class bytes with its high-water marks.
// Linked only into the `memharness-exact` executable; other binaries see the weak hooks of
// CExactPeakHooks resolve to nothing. Nothing here is meant to be imported: linking the target
// is what replaces the allocator's entry points.
#ifndef MEMHARNESS_EXACT_PEAK_H
#define MEMHARNESS_EXACT_PEAK_H
#include <stddef.h>
#include <stdint.h>

#include "exact_peak_hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Live size-class bytes right now: every block handed out by the malloc family (malloc, calloc,
/// realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc, pvalloc, operator new)
/// minus every block released, each counted as `malloc_usable_size` reports it.
int64_t memharness_exact_live_bytes(void);
/// The high-water mark of the live bytes since the last `memharness_exact_reset_peak`, bytes.
int64_t memharness_exact_peak_bytes(void);
/// Sets the high-water mark to the live bytes now and returns the previous mark, bytes.
int64_t memharness_exact_reset_peak(void);
/// The high-water mark since the last `memharness_exact_reset_phase_peak`, bytes.
int64_t memharness_exact_phase_peak_bytes(void);
/// Sets the phase high-water mark to the live bytes now and returns the previous mark, bytes.
int64_t memharness_exact_reset_phase_peak(void);
/// Allocating calls counted so far (for checks that the counter is really in the path).
int64_t memharness_exact_allocation_count(void);
/// 1 when malloc/calloc sizes come from jemalloc's size classes, verified against nallocx at start-up.
int memharness_exact_fast_size_classes(void);
/// 1 when malloc and free forward to jemalloc's own malloc and free (their fast paths).
int memharness_exact_forwards_to_fast_paths(void);
/// See `memharness_exact_hook_self_check`.
int memharness_exact_self_check(memharness_exact_check_row *rows, int capacity);

/// The counted allocation behind operator new: `size` bytes aligned to `alignment` (0: malloc's), or NULL.
void *memharness_exact_allocate(size_t size, size_t alignment);
/// The counted release behind operator delete (NULL is ignored).
void memharness_exact_release(void *block);

#ifdef __cplusplus
}
#endif

#endif
