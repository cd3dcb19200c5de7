// Weak references to the exact-peak counters: they resolve when the executable links CExactPeak
// (`memharness-exact`) and stay NULL otherwise, so the harness can ask whether exact mode is here.
#ifndef MEMHARNESS_EXACT_PEAK_HOOKS_H
#define MEMHARNESS_EXACT_PEAK_HOOKS_H
#include <stdint.h>

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

#endif
