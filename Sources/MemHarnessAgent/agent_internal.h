// Declarations shared by the agent's C files (not installed, not part of the API).
//
// Everything here is hidden: the only exported symbols of the library are the malloc family, _exit and _Exit,
// operator new/delete and the memharness_agent_* functions.
#ifndef MEMHARNESS_AGENT_INTERNAL_H
#define MEMHARNESS_AGENT_INTERNAL_H
#define _GNU_SOURCE
#include "memharness_agent.h"

#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define MH_HIDDEN __attribute__((visibility("hidden")))
#define MH_LIKELY(x) __builtin_expect(!!(x), 1)
#define MH_UNLIKELY(x) __builtin_expect(!!(x), 0)

// jemalloc's extended API (exported unprefixed by Debian's libjemalloc; not interposed here).
extern void *mallocx(size_t size, int flags);
extern void *rallocx(void *ptr, size_t size, int flags);
extern void dallocx(void *ptr, int flags);
extern size_t sallocx(const void *ptr, int flags);
extern size_t nallocx(size_t size, int flags);
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
extern int mallctlnametomib(const char *name, size_t *mibp, size_t *miblenp);
extern int mallctlbymib(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
#define MH_MALLOCX_LG_ALIGN(la) ((int)(la))
#define MH_MALLOCX_ZERO ((int)0x40)

// ---- Modes ------------------------------------------------------------------------------------
// mh_state is 0 when every call goes straight to jemalloc (the one predictable branch of the fast path).
#define MH_EXACT 1u   // count every allocation
#define MH_STACKS 2u  // sample allocation stacks (set once the tables exist)
#define MH_UNREAD 4u  // the environment has not been read yet (calls before the constructor)
#define MH_BLOCKS 8u  // track every live block (the heap graph), from the first call on
#define MH_COUNTING (MH_EXACT | MH_STACKS | MH_BLOCKS)

extern _Atomic unsigned mh_state MH_HIDDEN;
MH_HIDDEN unsigned mh_read_environment(void);

#define MH_PATH_CAPACITY 4096
struct mh_config {
    bool exact;
    bool heap;                   // every live block in a table, for heap captures
    int64_t stack_sample_bytes;  // mean bytes between samples; 0: stacks off
    double snapshot_step;        // fraction above the last peak snapshot's level
    int64_t interval_ns;         // sampler thread period; 0: no sampler thread
    int64_t origin_ns;           // CLOCK_MONOTONIC origin of every time the agent writes
    char samples_path[MH_PATH_CAPACITY];  // pattern (%p: pid); empty: none
    char record_path[MH_PATH_CAPACITY];   // pattern (%p: pid); empty: none
    char heap_at_exit_path[MH_PATH_CAPACITY];  // pattern (%p: pid): a heap capture at exit; empty: none
};
extern struct mh_config mh_config MH_HIDDEN;

// ---- Exact counts -----------------------------------------------------------------------------
// One cache line: every counted call touches the live count and reads the marks beside it.
struct mh_counts {
    _Atomic int64_t live_bytes;
    _Atomic int64_t peak_bytes;         // since the last take_peak
    _Atomic int64_t phase_peak_bytes;   // since the last take_phase_peak
    _Atomic int64_t record_peak_bytes;  // since load or restart_peak_snapshot: the record's `exact` peak
    _Atomic int64_t baseline_bytes;     // live at load or at restart_peak_snapshot
    _Atomic int64_t snapshot_threshold; // the peak signal that triggers the next `peak` snapshot
} __attribute__((aligned(64)));
extern struct mh_counts mh_counts MH_HIDDEN;

MH_HIDDEN int64_t mh_reset_mark(_Atomic int64_t *mark);
MH_HIDDEN int64_t mh_allocation_calls(void);  // calls that allocated, every thread's summed
MH_HIDDEN int64_t mh_now_ns(void);          // CLOCK_MONOTONIC, ns
MH_HIDDEN int64_t mh_relative_ns(void);     // since mh_config.origin_ns

// ---- Locks ------------------------------------------------------------------------------------
// A spinlock that yields: critical sections are short and pthread mutexes would be no better here;
// all of them are taken around fork (pthread_atfork) so a child never inherits one held.
typedef struct {
    _Atomic int held;
} mh_lock;

static inline void mh_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline bool mh_try_lock(mh_lock *lock) {
    return atomic_load_explicit(&lock->held, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&lock->held, 1, memory_order_acquire) == 0;
}

static inline void mh_acquire(mh_lock *lock) {
    for (unsigned spins = 0; !mh_try_lock(lock); spins++) {
        if (spins < 100) {
            mh_cpu_relax();
        } else {
            sched_yield();
        }
    }
}

static inline void mh_release_lock(mh_lock *lock) {
    atomic_store_explicit(&lock->held, 0, memory_order_release);
}

static inline void mh_reset_lock(mh_lock *lock) {
    atomic_store_explicit(&lock->held, 0, memory_order_relaxed);
}

// ---- Per-thread state (initial-exec TLS: no allocation, no lookup on the fast path) -------------
struct mh_thread {
    int64_t countdown;   // bytes until the next sampled allocation
    uint64_t rng;        // xorshift state
    uintptr_t stack_hi;  // top of this thread's stack; 0: unknown
    uint32_t guard;      // inside the agent: allocations made now are counted, never sampled
    uint8_t ready;       // countdown and rng drawn
    uint8_t bounds_known;
    uint8_t calls_shared;              // past the last slot: calls go to the shared count (see mh_count_call)
    _Atomic int64_t *call_slot;        // this thread's count of allocation calls; NULL until its first
};
extern __thread struct mh_thread mh_tls __attribute__((tls_model("initial-exec"))) MH_HIDDEN;

// ---- Stacks (stacks.c) -------------------------------------------------------------------------
#define MH_MAX_FRAMES 64
#define MH_MAX_STACKS (1u << 16)  // ids 1...65535; id 0 collects samples that found the table full
#define MH_FILTER_BITS 18         // counting filter in front of the live-block table
#define MH_BUCKET_BITS 16
#define MH_SHARD_BITS 6

struct mh_stack {
    uint64_t hash;
    uint32_t first_frame;  // index in the frame pool
    uint16_t depth;
    uint8_t truncated;     // deeper than MH_MAX_FRAMES
    uint8_t unused;
    _Atomic int64_t live_bytes;     // sum of the byte weights of its sampled blocks alive now
    _Atomic int64_t live_count_fx;  // sum of the count weights, in 1/65536
};
#define MH_COUNT_ONE 65536

extern struct mh_stack *mh_stacks MH_HIDDEN;
extern uintptr_t *mh_frame_pool MH_HIDDEN;
extern _Atomic uint32_t mh_stack_count MH_HIDDEN;
extern _Atomic uint8_t *mh_filter MH_HIDDEN;
extern _Atomic int64_t mh_samples_taken MH_HIDDEN;
extern _Atomic int64_t mh_samples_dropped MH_HIDDEN;
extern uintptr_t mh_text_lo MH_HIDDEN, mh_text_hi MH_HIDDEN;

MH_HIDDEN bool mh_stacks_init(void);
MH_HIDDEN void mh_find_agent_text(void);
MH_HIDDEN void mh_sample_slow(void *block, int64_t request, void *frame);
MH_HIDDEN void mh_forget_slow(void *block, uint64_t hash);
MH_HIDDEN int mh_walk(void *frame, uintptr_t *frames, int capacity, bool *truncated);
MH_HIDDEN void mh_thread_bounds(struct mh_thread *thread);
MH_HIDDEN int64_t mh_weight_bytes(int64_t request, int64_t usable);
MH_HIDDEN int64_t mh_sampled_live_bytes(void);  // sum over the stack table (for the self-check)

// A sampled block taken out of the table (realloc puts it back when jemalloc fails).
struct mh_sampled {
    uint32_t stack;
    int64_t bytes;
    int64_t count_fx;
};
MH_HIDDEN bool mh_sampled_take(void *block, struct mh_sampled *out);
MH_HIDDEN void mh_sampled_restore(void *block, const struct mh_sampled *sampled);
MH_HIDDEN void mh_stacks_fork_prepare(void);
MH_HIDDEN void mh_stacks_fork_parent(void);
MH_HIDDEN void mh_stacks_fork_child(void);

static inline uint64_t mh_pointer_hash(const void *block) {
    // Fibonacci hashing: the high bits of the product mix every bit of the 16-byte-aligned address.
    return ((uint64_t)(uintptr_t)block >> 4) * 0x9E3779B97F4A7C15ull;
}

// The one test a free pays in stacks mode: a byte of the counting filter, zero for almost every block.
static inline void mh_forget_sampled(void *block) {
    uint64_t hash = mh_pointer_hash(block);
    if (MH_LIKELY(atomic_load_explicit(&mh_filter[hash >> (64 - MH_FILTER_BITS)], memory_order_relaxed) == 0)) return;
    mh_forget_slow(block, hash);
}

// The one test an allocation pays in stacks mode: the thread's countdown of requested bytes to its next sample.
static inline void mh_sample_check(void *block, int64_t request, void *frame) {
    struct mh_thread *thread = &mh_tls;
    thread->countdown -= request;
    if (MH_UNLIKELY(thread->countdown <= 0)) mh_sample_slow(block, request, frame);
}

MH_HIDDEN uint32_t mh_sampled_stack_locked(uintptr_t block);  // 0: not sampled; the caller holds every lock
MH_HIDDEN int mh_stack_frames(uint32_t id, const uintptr_t **frames);

// ---- Every live block and the heap capture (heap.c) ------------------------------------------------
MH_HIDDEN bool mh_heap_init(void);
MH_HIDDEN void mh_heap_insert(void *block, int64_t bytes);
MH_HIDDEN void mh_heap_remove(void *block);
MH_HIDDEN int64_t mh_heap_block_count(void);
MH_HIDDEN void mh_heap_fork_prepare(void);
MH_HIDDEN void mh_heap_fork_parent(void);
MH_HIDDEN void mh_heap_fork_child(void);
MH_HIDDEN void mh_heap_start(void);  // the constructor's part: the signal-mask wrappers, the stop signal unblocked
MH_HIDDEN pid_t mh_sampler_tid(void);

// ---- Snapshots, marks, record (marks.c) -------------------------------------------------------
MH_HIDDEN bool mh_marks_init(void);
MH_HIDDEN void mh_peak_candidate(int64_t level);
MH_HIDDEN void mh_marks_fork_prepare(void);
MH_HIDDEN void mh_marks_fork_parent(void);
MH_HIDDEN void mh_marks_fork_child(void);

// ---- Sampler thread and exit (sampler.c) --------------------------------------------------------
MH_HIDDEN void mh_sampler_start(void);
MH_HIDDEN void mh_exit_handlers_install(void);
MH_HIDDEN void mh_sampler_fork_prepare(void);
MH_HIDDEN void mh_sampler_fork_parent(void);
MH_HIDDEN void mh_sampler_fork_child(void);
extern bool mh_forked_child MH_HIDDEN;

// ---- Held at exit for the capture's reader (hold.c) ----------------------------------------------
MH_HIDDEN void mh_hold_for_reader(void);  // the exit path's last step: waits for MEMHARNESS_AGENT_HOLD_AT_EXIT's reader

// ---- Text helpers (no stdio: nothing here may allocate) -----------------------------------------
MH_HIDDEN bool mh_expand_path(const char *pattern, char *out, size_t capacity);
MH_HIDDEN bool mh_pattern_has_pid(const char *pattern);

// Appends `value` in decimal at `p`; returns the end. 20 digits and a sign at most.
static inline char *mh_put_i64(char *p, int64_t value) {
    char digits[24];
    int n = 0;
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    do {
        digits[n++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (value < 0) *p++ = '-';
    while (n > 0) *p++ = digits[--n];
    return p;
}

// Appends `value` as 0x-prefixed lower-case hexadecimal; 18 bytes at most.
static inline char *mh_put_hex(char *p, uint64_t value) {
    char digits[16];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[value & 15];
        value >>= 4;
    } while (value != 0);
    *p++ = '0';
    *p++ = 'x';
    while (n > 0) *p++ = digits[--n];
    return p;
}

static inline char *mh_put_str(char *p, const char *text) {
    while (*text) *p++ = *text++;
    return p;
}

MH_HIDDEN bool mh_write_all(int fd, const char *bytes, size_t length);
MH_HIDDEN void *mh_map(size_t bytes);  // anonymous read-write pages, reserved lazily; NULL when none can be had
MH_HIDDEN void mh_warn(const char *message);

// ---- Entry points shared with the C++ file and the self-check ---------------------------------
MH_HIDDEN void *mh_new_block(size_t size, size_t alignment, void *frame);
MH_HIDDEN void mh_release(void *block);

#endif
