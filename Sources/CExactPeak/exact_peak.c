// The malloc family of the `memharness-exact` executable. Every entry point hands the work to
// jemalloc (linked unprefixed, so these definitions in the executable take precedence over its
// own for the whole process) and moves one atomic counter of live size-class bytes; the
// high-water marks (overall and per phase) follow with compare-and-swap.
//
// Why an interposer and not `experimental.hooks.install`: jemalloc's hooks take it off its fast
// path and cost ~5x per malloc/free pair on this machine kind, while the interposer's first
// version (mallocx + sallocx on every call) cost ~2x. This one keeps jemalloc's fast paths:
// - malloc and free forward to jemalloc's own `malloc` and `free`, found at start-up with
//   dlsym(RTLD_NEXT) and checked to live in the same library as `mallocx`; before that (calls
//   made while the dynamic loader and libc start) and if the check fails, mallocx/dallocx.
// - malloc and calloc compute the size-class bytes of a request from jemalloc's size-class
//   formula instead of asking jemalloc (`sallocx`) about the block; the formula is compared with
//   `nallocx` for every size up to 64 KiB and at every class boundary up to 1 TiB at start-up,
//   and not used when it disagrees or when heap profiling (which promotes sampled blocks) is on.
// - free must ask (`sallocx`): it is the one lookup left, ~3.5 ns.
// Measured in C, 20 M malloc/free pairs of 16 B-4 KiB with 64 alive: 13 ns per pair plain,
// 24-26 ns with mallocx/sallocx everywhere, 18 ns with this file (one thread; the counter is
// shared, so threads allocating at once also pay for moving its cache line between cores).
//
// What is counted: the bytes jemalloc hands out for each live block, as `malloc_usable_size`
// and `stats.allocated` count them (a 1,000-byte request is 1,024 bytes), not jemalloc's own
// metadata or the free blocks in its thread caches. A realloc that moves the block counts the
// old and the new block together for an instant, as jemalloc holds both while it copies.
#define _GNU_SOURCE
#include "exact_peak.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

// jemalloc's extended API (exported unprefixed by Debian's libjemalloc; not interposed here).
extern void *mallocx(size_t size, int flags);
extern void *rallocx(void *ptr, size_t size, int flags);
extern void dallocx(void *ptr, int flags);
extern size_t sallocx(const void *ptr, int flags);
extern size_t nallocx(size_t size, int flags);
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

#define MALLOCX_LG_ALIGN(la) ((int)(la))
#define MALLOCX_ZERO ((int)0x40)

static _Atomic int64_t live_bytes;
static _Atomic int64_t peak_bytes;
static _Atomic int64_t phase_peak_bytes;
static _Atomic int64_t allocation_count;

// Set once by the constructor, before any thread but the main one exists; read on every call.
static void *(*_Atomic jemalloc_malloc)(size_t);
static void (*_Atomic jemalloc_free)(void *);
static _Atomic bool size_classes_verified;

static inline void raise_mark(_Atomic int64_t *mark, int64_t now) {
    int64_t seen = atomic_load_explicit(mark, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak_explicit(mark, &seen, now, memory_order_relaxed, memory_order_relaxed)) {
    }
}

static inline void add_live(int64_t bytes) {
    int64_t now = atomic_fetch_add_explicit(&live_bytes, bytes, memory_order_relaxed) + bytes;
    raise_mark(&peak_bytes, now);
    raise_mark(&phase_peak_bytes, now);
}

static inline void count_call(void) {
    atomic_fetch_add_explicit(&allocation_count, 1, memory_order_relaxed);
}

// jemalloc 5's size classes with its defaults on x86-64 and aarch64 with 4 KiB pages (8-byte tiny
// class, 16-byte quantum, four classes per doubling): sz_s2u_compute without the lookup table.
static inline size_t size_class_of(size_t size) {
    if (size <= 8) return 8;
    size_t lg_floor = (size_t)(63 - __builtin_clzl((size << 1) - 1));
    size_t lg_delta = lg_floor < 7 ? 4 : lg_floor - 3;
    size_t mask = ((size_t)1 << lg_delta) - 1;
    return (size + mask) & ~mask;
}

static inline int64_t usable_of_request(size_t size, void *block) {
    return atomic_load_explicit(&size_classes_verified, memory_order_relaxed)
        ? (int64_t)size_class_of(size) : (int64_t)sallocx(block, 0);
}

static inline void *counted(void *block) {
    if (block == NULL) return NULL;
    count_call();
    add_live((int64_t)sallocx(block, 0));
    return block;
}

static bool formula_matches_jemalloc(void) {
    bool profiling = false;
    size_t length = sizeof(profiling);
    if (mallctl("opt.prof", &profiling, &length, NULL, 0) == 0 && profiling) return false;
    for (size_t size = 1; size <= 65536; size++) {
        if (size_class_of(size) != nallocx(size, 0)) return false;
    }
    for (unsigned lg = 16; lg < 40; lg++) {
        size_t group = (size_t)1 << lg;
        for (size_t step = 0; step < 4; step++) {
            size_t boundary = group + step * (group >> 2);
            for (size_t size = boundary - 1; size <= boundary + 1; size++) {
                if (size_class_of(size) != nallocx(size, 0)) return false;
            }
        }
    }
    return true;
}

static bool same_library(void *a, void *b) {
    Dl_info first, second;
    if (a == NULL || b == NULL || dladdr(a, &first) == 0 || dladdr(b, &second) == 0) return false;
    return first.dli_fbase == second.dli_fbase;
}

__attribute__((constructor(101))) static void find_jemalloc_fast_paths(void) {
    // dlsym may allocate; until the pointers are stored, those calls take the mallocx path.
    void *next_malloc = dlsym(RTLD_NEXT, "malloc");
    void *next_free = dlsym(RTLD_NEXT, "free");
    void *extended = dlsym(RTLD_DEFAULT, "mallocx");
    if (same_library(next_malloc, extended) && same_library(next_free, extended)) {
        atomic_store_explicit(&jemalloc_free, (void (*)(void *))next_free, memory_order_relaxed);
        atomic_store_explicit(&jemalloc_malloc, (void *(*)(size_t))next_malloc, memory_order_relaxed);
    }
    atomic_store_explicit(&size_classes_verified, formula_matches_jemalloc(), memory_order_relaxed);
}

static inline int lg_of(size_t alignment) {
    return __builtin_ctzl(alignment);
}

static inline bool power_of_two(size_t value) {
    return value != 0 && (value & (value - 1)) == 0;
}

static void *aligned_block(size_t alignment, size_t size) {
    return counted(mallocx(size == 0 ? 1 : size, MALLOCX_LG_ALIGN(lg_of(alignment))));
}

void *malloc(size_t size) {
    void *(*fast)(size_t) = atomic_load_explicit(&jemalloc_malloc, memory_order_relaxed);
    void *block = fast ? fast(size) : mallocx(size == 0 ? 1 : size, 0);
    if (block == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    count_call();
    add_live(usable_of_request(size == 0 ? 1 : size, block));
    return block;
}

void *calloc(size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    size_t request = total == 0 ? 1 : total;
    void *block = mallocx(request, MALLOCX_ZERO);
    if (block == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    count_call();
    add_live(usable_of_request(request, block));
    return block;
}

void free(void *block) {
    if (block == NULL) return;
    atomic_fetch_sub_explicit(&live_bytes, (int64_t)sallocx(block, 0), memory_order_relaxed);
    void (*fast)(void *) = atomic_load_explicit(&jemalloc_free, memory_order_relaxed);
    if (fast) {
        fast(block);
    } else {
        dallocx(block, 0);
    }
}

void *realloc(void *block, size_t size) {
    if (block == NULL) return malloc(size);
    if (size == 0) {
        // glibc's behaviour (and jemalloc's default zero_realloc:free): free and return NULL.
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
    count_call();
    if (moved == block) {
        add_live(after - before);
    } else {
        add_live(after);
        atomic_fetch_sub_explicit(&live_bytes, before, memory_order_relaxed);
    }
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
    if (!power_of_two(alignment) || alignment % sizeof(void *) != 0) return EINVAL;
    void *block = aligned_block(alignment, size);
    if (block == NULL) return ENOMEM;
    *result = block;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (!power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    void *block = aligned_block(alignment, size);
    if (block == NULL) errno = ENOMEM;
    return block;
}

void *memalign(size_t alignment, size_t size) {
    // glibc's memalign takes any alignment and rounds it up to a power of two.
    if (alignment > ((size_t)1 << 62)) {
        errno = EINVAL;
        return NULL;
    }
    size_t rounded = 1;
    while (rounded < alignment) rounded <<= 1;
    void *block = aligned_block(rounded, size);
    if (block == NULL) errno = ENOMEM;
    return block;
}

void *valloc(size_t size) {
    return aligned_alloc((size_t)sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded;
    if (__builtin_add_overflow(size, page - 1, &rounded)) {
        errno = ENOMEM;
        return NULL;
    }
    rounded = rounded / page * page;
    return aligned_alloc(page, rounded == 0 ? page : rounded);
}

size_t malloc_usable_size(void *block) {
    return block == NULL ? 0 : sallocx(block, 0);
}

void *memharness_exact_allocate(size_t size, size_t alignment) {
    if (alignment <= 16) return malloc(size == 0 ? 1 : size);
    return power_of_two(alignment) ? aligned_block(alignment, size) : NULL;
}

void memharness_exact_release(void *block) {
    free(block);
}

int64_t memharness_exact_live_bytes(void) { return atomic_load_explicit(&live_bytes, memory_order_relaxed); }
int64_t memharness_exact_peak_bytes(void) { return atomic_load_explicit(&peak_bytes, memory_order_relaxed); }
int64_t memharness_exact_phase_peak_bytes(void) { return atomic_load_explicit(&phase_peak_bytes, memory_order_relaxed); }
int64_t memharness_exact_allocation_count(void) { return atomic_load_explicit(&allocation_count, memory_order_relaxed); }
int memharness_exact_fast_size_classes(void) { return atomic_load_explicit(&size_classes_verified, memory_order_relaxed); }
int memharness_exact_forwards_to_fast_paths(void) { return atomic_load_explicit(&jemalloc_malloc, memory_order_relaxed) != NULL; }

// Another thread may allocate between the load of the live bytes and the exchange: its mark went
// to the period that ends, so the live bytes are read again afterwards and the new mark raised to
// them (such an allocation counts in both periods rather than in neither).
static int64_t reset_mark(_Atomic int64_t *mark) {
    int64_t previous = atomic_exchange_explicit(mark, atomic_load_explicit(&live_bytes, memory_order_relaxed), memory_order_relaxed);
    raise_mark(mark, atomic_load_explicit(&live_bytes, memory_order_relaxed));
    return previous;
}

int64_t memharness_exact_reset_peak(void) { return reset_mark(&peak_bytes); }
int64_t memharness_exact_reset_phase_peak(void) { return reset_mark(&phase_peak_bytes); }
