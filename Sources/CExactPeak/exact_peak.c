// The malloc family of the `memharness-exact` executable: every call forwards to jemalloc's own
// extended API (mallocx, rallocx, dallocx, sallocx), which this file does not replace, and moves
// one atomic counter of live size-class bytes; high-water marks follow with compare-and-swap.
//
// Why this route and not `experimental.hooks.install`: measured on this machine kind, jemalloc's
// hooks take it off its fast path and cost ~5x per malloc/free pair, while this forwarding family
// costs ~2x (one extra call, one sallocx lookup, one atomic add). Both see every allocation; this
// one also counts in size classes exactly as `stats.allocated` does.
#define _GNU_SOURCE
#include "exact_peak.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

// jemalloc's extended API (exported unprefixed by Debian's libjemalloc; not interposed here).
extern void *mallocx(size_t size, int flags);
extern void *rallocx(void *ptr, size_t size, int flags);
extern void dallocx(void *ptr, int flags);
extern size_t sallocx(const void *ptr, int flags);

#define MALLOCX_LG_ALIGN(la) ((int)(la))
#define MALLOCX_ZERO ((int)0x40)

static _Atomic int64_t live_bytes;
static _Atomic int64_t peak_bytes;
static _Atomic int64_t phase_peak_bytes;
static _Atomic int64_t allocation_count;

static inline void raise_mark(_Atomic int64_t *mark, int64_t now) {
    int64_t seen = atomic_load_explicit(mark, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak_explicit(mark, &seen, now, memory_order_relaxed, memory_order_relaxed)) {
    }
}

static inline void *counted(void *block) {
    if (block == NULL) return NULL;
    int64_t size = (int64_t)sallocx(block, 0);
    int64_t now = atomic_fetch_add_explicit(&live_bytes, size, memory_order_relaxed) + size;
    atomic_fetch_add_explicit(&allocation_count, 1, memory_order_relaxed);
    raise_mark(&peak_bytes, now);
    raise_mark(&phase_peak_bytes, now);
    return block;
}

static inline int lg_of(size_t alignment) {
    int lg = 0;
    while (((size_t)1 << lg) < alignment) lg++;
    return lg;
}

static inline int valid_alignment(size_t alignment) {
    return alignment != 0 && (alignment & (alignment - 1)) == 0;
}

void *malloc(size_t size) {
    void *block = mallocx(size == 0 ? 1 : size, 0);
    if (block == NULL) errno = ENOMEM;
    return counted(block);
}

void *calloc(size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    void *block = mallocx(total == 0 ? 1 : total, MALLOCX_ZERO);
    if (block == NULL) errno = ENOMEM;
    return counted(block);
}

void free(void *block) {
    if (block == NULL) return;
    atomic_fetch_sub_explicit(&live_bytes, (int64_t)sallocx(block, 0), memory_order_relaxed);
    dallocx(block, 0);
}

void *realloc(void *block, size_t size) {
    if (block == NULL) return malloc(size);
    if (size == 0) {
        // glibc's behaviour: free and return NULL.
        free(block);
        return NULL;
    }
    int64_t before = (int64_t)sallocx(block, 0);
    void *moved = rallocx(block, size, 0);
    if (moved == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    int64_t after = (int64_t)sallocx(moved, 0);
    int64_t now = atomic_fetch_add_explicit(&live_bytes, after - before, memory_order_relaxed) + (after - before);
    atomic_fetch_add_explicit(&allocation_count, 1, memory_order_relaxed);
    raise_mark(&peak_bytes, now);
    raise_mark(&phase_peak_bytes, now);
    return moved;
}

void *reallocarray(void *block, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(block, total);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (!valid_alignment(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
    void *block = mallocx(size == 0 ? 1 : size, MALLOCX_LG_ALIGN(lg_of(alignment)));
    if (block == NULL) return ENOMEM;
    *result = counted(block);
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (!valid_alignment(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    void *block = mallocx(size == 0 ? 1 : size, MALLOCX_LG_ALIGN(lg_of(alignment)));
    if (block == NULL) errno = ENOMEM;
    return counted(block);
}

void *memalign(size_t alignment, size_t size) {
    return aligned_alloc(alignment, size);
}

void *valloc(size_t size) {
    return aligned_alloc((size_t)sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return aligned_alloc(page, (size + page - 1) / page * page);
}

size_t malloc_usable_size(void *block) {
    return block == NULL ? 0 : sallocx(block, 0);
}

int64_t memharness_exact_live_bytes(void) { return atomic_load_explicit(&live_bytes, memory_order_relaxed); }
int64_t memharness_exact_peak_bytes(void) { return atomic_load_explicit(&peak_bytes, memory_order_relaxed); }
int64_t memharness_exact_phase_peak_bytes(void) { return atomic_load_explicit(&phase_peak_bytes, memory_order_relaxed); }
int64_t memharness_exact_allocation_count(void) { return atomic_load_explicit(&allocation_count, memory_order_relaxed); }

int64_t memharness_exact_reset_peak(void) {
    return atomic_exchange_explicit(&peak_bytes, atomic_load_explicit(&live_bytes, memory_order_relaxed), memory_order_relaxed);
}

int64_t memharness_exact_reset_phase_peak(void) {
    return atomic_exchange_explicit(&phase_peak_bytes, atomic_load_explicit(&live_bytes, memory_order_relaxed), memory_order_relaxed);
}
