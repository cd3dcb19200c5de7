// Exact peak accounting: an interposed malloc family that forwards to jemalloc and keeps a
// process-wide count of live size-class bytes with its high-water marks.
// Linked only into the `memharness-exact` executable; other binaries see the weak hooks of
// CExactPeakHooks resolve to nothing.
#ifndef MEMHARNESS_EXACT_PEAK_H
#define MEMHARNESS_EXACT_PEAK_H
#include <stdint.h>

/// Live size-class bytes right now (every malloc/calloc/realloc/posix_memalign/aligned_alloc/
/// memalign/valloc/pvalloc minus every free, as `malloc_usable_size` counts them).
int64_t memharness_exact_live_bytes(void);
/// The high-water mark since the last `memharness_exact_reset_peak`.
int64_t memharness_exact_peak_bytes(void);
/// Sets the high-water mark to the live bytes now and returns the previous mark.
int64_t memharness_exact_reset_peak(void);
/// The high-water mark since the last `memharness_exact_reset_phase_peak`.
int64_t memharness_exact_phase_peak_bytes(void);
/// Sets the phase high-water mark to the live bytes now and returns the previous mark.
int64_t memharness_exact_reset_phase_peak(void);
/// Allocation calls counted so far (for checks that the counter is really in the path).
int64_t memharness_exact_allocation_count(void);

#endif
