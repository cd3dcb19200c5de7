#include "exact_peak_hooks.h"

extern int64_t memharness_exact_live_bytes(void) __attribute__((weak));
extern int64_t memharness_exact_reset_peak(void) __attribute__((weak));
extern int64_t memharness_exact_reset_phase_peak(void) __attribute__((weak));
extern int64_t memharness_exact_allocation_count(void) __attribute__((weak));

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
