// Weak references: in an executable linked with CExactPeak they are that target's functions; in any
// other binary (memharness, the benchmarks, test bundles) they are NULL and every hook says so.
#include "exact_peak_hooks.h"

extern int64_t memharness_exact_live_bytes(void) __attribute__((weak));
extern int64_t memharness_exact_reset_peak(void) __attribute__((weak));
extern int64_t memharness_exact_reset_phase_peak(void) __attribute__((weak));
extern int64_t memharness_exact_allocation_count(void) __attribute__((weak));
extern int memharness_exact_fast_size_classes(void) __attribute__((weak));
extern int memharness_exact_forwards_to_fast_paths(void) __attribute__((weak));
extern int memharness_exact_self_check(memharness_exact_check_row *rows, int capacity) __attribute__((weak));

int memharness_exact_available(void) {
    return memharness_exact_live_bytes != 0;
}

int64_t memharness_exact_hook_live_bytes(void) {
    return memharness_exact_live_bytes ? memharness_exact_live_bytes() : -1;
}

int64_t memharness_exact_hook_take_peak(void) {
    return memharness_exact_reset_peak ? memharness_exact_reset_peak() : -1;
}

int64_t memharness_exact_hook_take_phase_peak(void) {
    return memharness_exact_reset_phase_peak ? memharness_exact_reset_phase_peak() : -1;
}

int64_t memharness_exact_hook_allocation_count(void) {
    return memharness_exact_allocation_count ? memharness_exact_allocation_count() : -1;
}

int memharness_exact_hook_fast_size_classes(void) {
    return memharness_exact_fast_size_classes ? memharness_exact_fast_size_classes() : -1;
}

int memharness_exact_hook_forwards_to_fast_paths(void) {
    return memharness_exact_forwards_to_fast_paths ? memharness_exact_forwards_to_fast_paths() : -1;
}

int memharness_exact_hook_self_check(memharness_exact_check_row *rows, int capacity) {
    return memharness_exact_self_check ? memharness_exact_self_check(rows, capacity) : -1;
}
