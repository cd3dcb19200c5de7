// Declarations shared by the agent's C files (not installed, not part of the API).
//
// Everything here is hidden: the only exported symbols of the library are the malloc family, mmap and munmap (which
// note jemalloc's mappings, resident.c), _exit and _Exit, operator new/delete and the memharness_agent_* functions.
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

// jemalloc's extended API (exported unprefixed by Debian's libjemalloc; not interposed here). Weak: the agent does not
// link jemalloc, so that a program run with the agent alone preloaded keeps glibc's malloc; each is NULL when no loaded
// library defines it (the preloaded jemalloc, or one the program links, does).
extern void *mallocx(size_t size, int flags) __attribute__((weak));
extern void *rallocx(void *ptr, size_t size, int flags) __attribute__((weak));
extern void dallocx(void *ptr, int flags) __attribute__((weak));
extern size_t sallocx(const void *ptr, int flags) __attribute__((weak));
extern size_t nallocx(size_t size, int flags) __attribute__((weak));
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) __attribute__((weak));
extern int mallctlnametomib(const char *name, size_t *mibp, size_t *miblenp) __attribute__((weak));
extern int mallctlbymib(const size_t *mib, size_t miblen, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
    __attribute__((weak));
#define MH_MALLOCX_LG_ALIGN(la) ((int)(la))
#define MH_MALLOCX_ZERO ((int)0x40)

// glibc's own malloc family (exported by libc under these names, past any interposer).
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *block, size_t size);
extern void __libc_free(void *block);
extern void *__libc_memalign(size_t alignment, size_t size);

// ---- The allocator behind malloc ----------------------------------------------------------------------
// jemalloc when its extended API is loaded (it then serves malloc: agent.c forwards to it), else glibc's malloc.
// The agent's own moves and lookups (a block made or sized past the program's entry points) go through these.
static inline bool mh_on_jemalloc(void) { return mallocx != NULL; }
// Which allocator serves malloc, as the constructor found it (written once, before any thread of the agent's).
enum mh_allocator { MH_ALLOCATOR_UNKNOWN, MH_ALLOCATOR_JEMALLOC, MH_ALLOCATOR_GLIBC };
MH_HIDDEN extern enum mh_allocator mh_allocator;

// glibc's usable bytes of a live block from its chunk header (malloc_usable_size's formula in glibc 2.26+ without
// memory tagging): the chunk's size less its header, 16 bytes for a mapped chunk (flag 2), 8 otherwise.
static inline size_t mh_glibc_usable(const void *block) {
    size_t head = ((const size_t *)block)[-1];
    size_t size = head & ~(size_t)7;
    return (head & 2) ? size - 16 : size - 8;
}

static inline void *mh_mallocx(size_t size, int flags) {
    if (mh_on_jemalloc()) return mallocx(size, flags);
    if (flags & MH_MALLOCX_ZERO) return __libc_calloc(1, size);
    int lg_align = flags & 0x3f;
    return lg_align > 4 ? __libc_memalign((size_t)1 << lg_align, size) : __libc_malloc(size);
}
static inline void *mh_rallocx(void *block, size_t size, int flags) {
    return mh_on_jemalloc() ? rallocx(block, size, flags) : __libc_realloc(block, size);
}
static inline void mh_dallocx(void *block, int flags) {
    if (mh_on_jemalloc()) dallocx(block, flags);
    else __libc_free(block);
}
static inline size_t mh_sallocx(const void *block, int flags) {
    return mh_on_jemalloc() ? sallocx(block, flags) : mh_glibc_usable(block);
}

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
    _Atomic int64_t sample_peak_bytes;  // since the sampler's last `s` line: the high between two samples
    _Atomic int64_t baseline_bytes;     // live at load or at restart_peak_snapshot
    _Atomic int64_t snapshot_threshold; // the peak signal that triggers the next `peak` snapshot
} __attribute__((aligned(64)));
extern struct mh_counts mh_counts MH_HIDDEN;

MH_HIDDEN int64_t mh_reset_mark(_Atomic int64_t *mark);
MH_HIDDEN int64_t mh_allocation_calls(void);  // calls that allocated, every thread's summed
MH_HIDDEN int64_t mh_allocated_bytes(void);   // the bytes those calls handed out, summed the same way

// One thread's count of allocation calls and of the bytes they handed out (agent.c), on a cache line of its own.
struct mh_call_count {
    _Atomic int64_t calls;
    _Atomic int64_t bytes;
} __attribute__((aligned(64)));
MH_HIDDEN int64_t mh_now_ns(void);          // CLOCK_MONOTONIC, ns
MH_HIDDEN int64_t mh_relative_ns(void);     // since mh_config.origin_ns

// ---- Per-thread state (initial-exec TLS: no allocation, no lookup on the fast path) -------------
// A thread's program state where it entered the agent (exit, _exit, a capture of a C program's own): the stack
// pointer of its caller at the call, the caller's frame pointer and return address, and its callee-saved registers
// (stored where a signal context keeps them, so the capture treats it as any stopped thread).
#if defined(__x86_64__)
#define MH_REGISTERS 23  // NGREG
#elif defined(__aarch64__)
#define MH_REGISTERS 34
#else
#define MH_REGISTERS 1
#endif
struct mh_stopped {
    int32_t tid;
    uintptr_t sp, pc, fp, tp;
    uintptr_t registers[MH_REGISTERS];
};

// Operations on the tables that a thread could not do when it asked for them: an allocation (or a free) made by a
// signal handler that interrupted this thread inside the agent, while it held a lock the operation needs. They
// wait here, in order, and are done when the thread leaves its last lock (see mh_deferred_flush).
#define MH_DEFERRED 32
struct mh_deferred {
    uintptr_t block;
    int64_t bytes;  // > 0: insert with these size-class bytes; 0: release (forget, then free the block)
};

struct mh_thread {
    int64_t countdown;   // bytes until the next sampled allocation
    uint64_t rng;        // xorshift state
    uintptr_t stack_hi;  // top of this thread's stack; 0: unknown
    uint32_t guard;      // inside the agent: allocations made now are counted, never sampled
    uint32_t harness;    // inside the harness's own work (memharness_agent_harness_begin): its blocks are not the program's
    uint32_t depth;      // agent locks this thread holds now (see mh_lock_take)
    uint8_t ready;       // countdown and rng drawn
    uint8_t bounds_known;
    uint8_t calls_shared;              // past the last slot: calls go to the shared count (see mh_count_call)
    uint8_t flushing;                  // mh_deferred_flush is running on this thread
    uint8_t forking;                   // inside fork(), glibc's fork handlers included (see lifecycle.c)
    uint32_t forks_unlocked;           // forks in progress on this thread that took no lock (see lifecycle.c)
    int32_t tid;                       // this thread's id; 0 until asked (mh_thread_id)
    struct mh_call_count *call_slot;   // this thread's count of allocation calls; NULL until its first
    uint32_t last_stack;               // the depot id of this thread's last walked stack, and its hash (a cache)
    uint64_t last_hash;
    struct mh_stopped exit_caller;     // where this thread called exit or _exit (valid when exit_caller.tid != 0)
    _Atomic uint32_t deferred_count;
    struct mh_deferred deferred[MH_DEFERRED];
};
extern __thread struct mh_thread mh_tls __attribute__((tls_model("initial-exec"))) MH_HIDDEN;

MH_HIDDEN int32_t mh_thread_id(void);
MH_HIDDEN void mh_deferred_flush(void);

// ---- Locks ------------------------------------------------------------------------------------
// A spinlock that yields: critical sections are short and pthread mutexes would be no better here. Every lock of
// every module is taken, in the lifecycle's one order, around fork, a heap capture and exit (lifecycle.c).
// Each lock a thread holds counts in its `depth`: an allocation that finds it above zero was made by a signal
// handler that interrupted the agent, and must not wait for a lock its own thread holds (it is deferred instead).
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

static inline bool mh_lock_try(mh_lock *lock) {
    mh_tls.depth++;
    if (atomic_load_explicit(&lock->held, memory_order_relaxed) == 0 &&
        atomic_exchange_explicit(&lock->held, 1, memory_order_acquire) == 0) {
        return true;
    }
    mh_tls.depth--;
    return false;
}

static inline void mh_lock_take(mh_lock *lock) {
    mh_tls.depth++;
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&lock->held, memory_order_relaxed) == 0 &&
            atomic_exchange_explicit(&lock->held, 1, memory_order_acquire) == 0) {
            return;
        }
        if (spins < 100) {
            mh_cpu_relax();
        } else {
            sched_yield();
        }
    }
}

static inline void mh_lock_release(mh_lock *lock) {
    atomic_store_explicit(&lock->held, 0, memory_order_release);
    struct mh_thread *thread = &mh_tls;
    if (--thread->depth == 0 && MH_UNLIKELY(atomic_load_explicit(&thread->deferred_count, memory_order_relaxed) != 0)) {
        mh_deferred_flush();
    }
}

// In a fork child: the lock as free, whoever held it in the parent (the forking thread's depth is reset apart).
static inline void mh_lock_reset(mh_lock *lock) {
    atomic_store_explicit(&lock->held, 0, memory_order_relaxed);
}

// ---- The lifecycle (lifecycle.c): one table of modules, one lock order ------------------------------------------
// Every module of the agent in one ordered table: start-up walks it in order (init), fork and a heap capture take
// every module's locks in its order and release them in reverse (lock, unlock), a fork child resets them in order
// (child), and exit calls each module's at-exit step in order (at_exit). Before any of it, the one lifecycle lock
// (a ticket lock: first come, first served) orders forks, captures and exit among themselves.
struct mh_module {
    const char *name;
    bool (*init)(void);                                      // at start-up; false: the module is off (it warns)
    void (*lock)(void);                                      // take every lock of the module
    void (*unlock)(void);                                    // release them
    void (*child)(void);                                     // in a fork child, with every lock taken before it
    void (*at_exit)(int status, const struct mh_stopped *caller);  // at exit, with no module lock held
};

MH_HIDDEN void mh_lifecycle_start(void);     // the constructor's part: init in order, fork and exit handlers
MH_HIDDEN void mh_lifecycle_enter(void);     // the lifecycle lock (recursive for its owner)
MH_HIDDEN void mh_lifecycle_leave(void);
MH_HIDDEN void mh_lock_modules(void);        // every module's locks, in table order (the caller holds the lifecycle)
MH_HIDDEN void mh_unlock_modules(void);      // in reverse
MH_HIDDEN void mh_finish(int status, const struct mh_stopped *caller);  // the exit path (once per process)
extern bool mh_forked_child MH_HIDDEN;       // this process is a fork child of the one that loaded the agent

// The modules (each in its file) and their steps.
MH_HIDDEN void mh_counts_child(void);                     // agent.c
MH_HIDDEN bool mh_counts_init(void);
MH_HIDDEN void mh_capture_at_exit(int status, const struct mh_stopped *caller);  // capture.c
MH_HIDDEN void mh_signal_masks_start(void);               // sigmask.c (not a module: no lock, no fork, no exit step)
MH_HIDDEN bool mh_sampler_init(void);                     // sampler.c
MH_HIDDEN void mh_sampler_lock(void);
MH_HIDDEN void mh_sampler_unlock(void);
MH_HIDDEN void mh_sampler_child(void);
MH_HIDDEN void mh_sampler_at_exit(int status, const struct mh_stopped *caller);
MH_HIDDEN bool mh_marks_init(void);                       // marks.c
MH_HIDDEN void mh_marks_lock(void);
MH_HIDDEN void mh_marks_unlock(void);
MH_HIDDEN void mh_marks_child(void);
MH_HIDDEN void mh_record_at_exit(int status, const struct mh_stopped *caller);
MH_HIDDEN bool mh_stacks_init(void);                      // stacks.c
MH_HIDDEN bool mh_stacks_create(void);                    // stacks.c: the depot's mappings, at the first call
MH_HIDDEN void mh_stacks_lock(void);
MH_HIDDEN void mh_stacks_unlock(void);
MH_HIDDEN void mh_stacks_child(void);
// hold.c: the harness's Unix sockets (a name starting with @ is in the abstract namespace).
MH_HIDDEN bool mh_read_socket_path(const char *variable, char *path, size_t capacity);  // false: unset or too long
MH_HIDDEN int mh_connect_socket(const char *path, int type);  // a connected descriptor (close-on-exec), or -1
MH_HIDDEN void mh_wait_for_answer(int socket_fd, int64_t limit_ns);  // a byte, the end, or the limit
MH_HIDDEN bool mh_request_init(void);                     // request.c
MH_HIDDEN void mh_request_child(void);
MH_HIDDEN pid_t mh_request_tid(void);
// capture.c: a capture on request, from the agent's request thread; `hold` runs with it written and the world stopped.
MH_HIDDEN int mh_capture_requested(int fd, const char *label, void (*hold)(void));
MH_HIDDEN void mh_blocks_lock(void);                      // blocks.c
MH_HIDDEN void mh_blocks_unlock(void);
MH_HIDDEN void mh_blocks_child(void);

// ---- Stacks and the stack depot (stacks.c) -----------------------------------------------------------------------
#define MH_MAX_FRAMES 64
#define MH_STACK_ID_BITS 22
#define MH_MAX_STACKS (1u << MH_STACK_ID_BITS)  // ids 1...4 Mi - 1; id 0: none (or the depot was full)
#define MH_FILTER_BITS 18         // counting filter in front of the sampled-block table
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

MH_HIDDEN void mh_find_agent_text(void);
MH_HIDDEN void mh_sample_slow(void *block, int64_t request, void *frame);
MH_HIDDEN void mh_forget_slow(void *block, uint64_t hash);
MH_HIDDEN int mh_walk(void *frame, uintptr_t *frames, int capacity, bool *truncated);
MH_HIDDEN void mh_thread_bounds(struct mh_thread *thread);
MH_HIDDEN int64_t mh_weight_bytes(int64_t request, int64_t usable);
MH_HIDDEN int64_t mh_sampled_live_bytes(void);  // sum over the stack table (for the self-check)
MH_HIDDEN uint32_t mh_allocation_stack(void *frame);  // the depot id of the stack that allocates now (0: none)

// A sampled block taken out of the table (realloc puts it back when jemalloc fails).
struct mh_sampled {
    uint32_t stack;
    int64_t bytes;
    int64_t count_fx;
};
MH_HIDDEN bool mh_sampled_take(void *block, struct mh_sampled *out);
MH_HIDDEN void mh_sampled_restore(void *block, const struct mh_sampled *sampled);

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

MH_HIDDEN int mh_stack_frames(uint32_t id, const uintptr_t **frames);

// ---- Every live block (blocks.c) --------------------------------------------------------------------------------
// A slot of the table: the block's address, its size-class bytes (40 bits: 1 TiB) and its allocation stack's depot id.
struct mh_block_slot {
    uintptr_t address;  // 0: empty
    uint64_t size_and_stack;
};
#define MH_BLOCK_SIZE_BITS 40
// The stack id of a block the harness allocated for itself (between memharness_agent_harness_begin and _end: naming and
// analysing captures, its symbol tables): listed, so its release is seen, but never in a capture, so the harness's
// own memory is never a type, a path or a leak of the program's. The depot's ids stay below it (4 Mi stacks).
#define MH_STACK_HARNESS ((uint32_t)((1u << (64 - MH_BLOCK_SIZE_BITS)) - 1))
static inline uint64_t mh_block_bytes(const struct mh_block_slot *slot) {
    return slot->size_and_stack & (((uint64_t)1 << MH_BLOCK_SIZE_BITS) - 1);
}
static inline uint32_t mh_block_stack(const struct mh_block_slot *slot) {
    return (uint32_t)(slot->size_and_stack >> MH_BLOCK_SIZE_BITS);
}

MH_HIDDEN bool mh_blocks_create(void);  // at the first call into the agent, before any block is handed out
MH_HIDDEN bool mh_blocks_ready(void);
MH_HIDDEN void mh_blocks_insert(void *block, int64_t bytes, uint32_t stack);
MH_HIDDEN uint32_t mh_blocks_take(void *block);  // removes it; its stack id (0: not listed)
MH_HIDDEN int64_t mh_blocks_count(void);
MH_HIDDEN int64_t mh_blocks_lost(void);  // blocks left out or left behind (a full ring of deferred operations)
MH_HIDDEN void mh_blocks_note_lost(void);
// The table, read with every lock held (a capture): the number of live blocks and a copy of them into `out`.
MH_HIDDEN uint64_t mh_blocks_copy(struct mh_block_slot *out, uint64_t capacity);
// Calls `visit` with each block the harness allocated for itself (MH_STACK_HARNESS): a capture scans them as roots.
MH_HIDDEN void mh_blocks_each_harness(void (*visit)(uintptr_t address, uint64_t bytes, void *context), void *context);

// ---- Stopping the world (world.c) ----------------------------------------------------------------------------------
#define MH_MAX_THREADS 4096
struct mh_world {
    int32_t signalled[MH_MAX_THREADS];
    int signalled_count;
    int unstopped;  // signalled but not arrived by the deadline
};
MH_HIDDEN const char *mh_world_prepare(void);  // installs the stop signal's handler once; NULL or why not
MH_HIDDEN void mh_world_stop(struct mh_world *world);
MH_HIDDEN void mh_world_resume(struct mh_world *world);
MH_HIDDEN uint32_t mh_world_stopped(const struct mh_stopped **threads);  // the threads stopped now, their states
MH_HIDDEN uintptr_t mh_thread_pointer(void);
#define MH_STOP_SIGNAL (SIGRTMAX - 3)

struct mh_writer;  // writer.c, below

// ---- The capture's sorted blocks (sort.c) and its layout and roots (roots.c) --------------------------------------
struct mh_sorted {
    struct mh_block_slot *blocks;  // sorted by address
    uint64_t count;
    uintptr_t low, high;  // first start, last end
};
MH_HIDDEN bool mh_sorted_take(struct mh_sorted *sorted, size_t *region_bytes);  // a sorted copy, in one mapping

#define MH_POINTER_MASK (~(uintptr_t)0xFF00000000000007ull)

// The index of the block holding `word` once Swift's spare bits are cleared (enum tags, bridge-object flags), or -1.
static inline int64_t mh_block_of(const struct mh_sorted *sorted, uintptr_t word) {
    uintptr_t value = word & MH_POINTER_MASK;
    if (value < sorted->low || value >= sorted->high) return -1;
    uint64_t low = 0, high = sorted->count;
    while (high - low > 1) {
        uint64_t middle = (low + high) / 2;
        if (sorted->blocks[middle].address <= value) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return value < sorted->blocks[low].address + mh_block_bytes(&sorted->blocks[low]) ? (int64_t)low : -1;
}

struct mh_range {
    uintptr_t start, end;
    bool anonymous_writable;  // rw- and no file (inode 0): a thread stack, a heap extent, a private mapping
};
MH_HIDDEN void mh_layout_read_modules(void);                 // before the world stops (the loader's lock)
MH_HIDDEN bool mh_layout_read_mappings(uintptr_t excluded);  // with the world stopped
MH_HIDDEN const struct mh_range *mh_mapping_of(uintptr_t address);
MH_HIDDEN void mh_put_layout(struct mh_writer *writer);
// Every root (globals, the capturing thread's program frames `self` (NULL: none), every stopped thread), written
// as the capture's roots section; their count.
MH_HIDDEN uint64_t mh_put_roots(struct mh_writer *writer, const struct mh_sorted *sorted, const struct mh_stopped *self,
                                const struct mh_stopped *stopped, uint32_t stopped_count);

// ---- Signal masks (sigmask.c) ------------------------------------------------------------------------------------
MH_HIDDEN int mh_raw_sigprocmask(int how, const void *set, void *old);

// ---- The capture at the peak (capture.c) --------------------------------------------------------------------------
extern _Atomic int64_t mh_blocks_live_bytes MH_HIDDEN;  // blocks.c: the listed blocks' bytes
MH_HIDDEN void mh_peak_note_live(int64_t now);           // a new level of the listed bytes (under a shard's lock)
MH_HIDDEN bool mh_peak_due(void);                        // armed, and the listed bytes reached the next capture's level
MH_HIDDEN void mh_capture_at_peak(void *frame);          // from a release, before the block goes

// ---- Snapshots, marks, record (marks.c) -------------------------------------------------------
MH_HIDDEN void mh_peak_candidate(int64_t level);

// ---- Sampler thread (sampler.c) --------------------------------------------------------------------
// ---- The resident set explained (resident.c) ---------------------------------------------------------
// Bytes of the resident set by kind of mapping; jemalloc_pages: the pages of jemalloc's own mappings the kernel holds
// resident (-1: unknown), left out of stacks and other_anonymous.
// On glibc: jemalloc_pages holds glibc's heaps' pages instead, and arenas the count of glibc's arenas seen.
struct mh_resident_parts {
    int64_t files, stacks, other_anonymous, jemalloc_pages, arenas;
};
MH_HIDDEN bool mh_resident_parts(int smaps_fd, struct mh_resident_parts *parts);
MH_HIDDEN void mh_resident_child(void);  // in a fork child (from the sampler's child step)
MH_HIDDEN pid_t mh_sampler_tid(void);

// ---- glibc's malloc figures (glibc.c) ---------------------------------------------------------------------------
// From mallinfo2, bytes: in use (uordblks + hblkhd), free in the arenas (fordblks, the top chunk's included), chunks
// of their own mapping (hblkhd), what trimming the top would give back at least (keepcost), and what glibc holds
// from the kernel (arena + hblkhd).
struct mh_glibc_figures {
    int64_t in_use, free, mapped, releasable, system;
};
MH_HIDDEN void mh_glibc_figures(struct mh_glibc_figures *figures);
// True when [start, end) is the read-write part of a glibc arena's heap; `first`: the arena's first heap.
MH_HIDDEN bool mh_glibc_arena_heap(uintptr_t start, uintptr_t end, bool *first);
MH_HIDDEN int64_t mh_glibc_read(int64_t slots[6], int64_t extra[3]);
MH_HIDDEN void mh_glibc_explain(int64_t values[14], const struct mh_resident_parts *parts, bool fresh);

// ---- The one writer of the agent's files (writer.c) -------------------------------------------------------------
// Samples, records and captures all go through it: a buffer that is flushed with write(2), a shared first line
// (`memharness-agent-<kind> <version>`: the readers check both), and for a named file, a `.tmp` renamed into place
// at the end (a reader never sees half a file) or, for a descriptor the caller owns, an append at its offset.
enum mh_file_kind { MH_FILE_SAMPLES, MH_FILE_RECORD, MH_FILE_CAPTURE };
struct mh_writer {
    int fd;
    bool owns_fd;                // opened here (closed, renamed or unlinked by mh_writer_finish)
    int error;                   // the first errno of a failed write; 0 while all is well
    char *buffer;
    size_t used, capacity;
    uint64_t base;               // where the file starts in the descriptor (an append to a caller's file)
    uint64_t written;            // bytes flushed since `base`
    char path[MH_PATH_CAPACITY]; // the final name of a file renamed into place at the end ("": a stream, a descriptor)
};
MH_HIDDEN int mh_writer_open(struct mh_writer *writer, const char *path, char *buffer, size_t capacity);
MH_HIDDEN int mh_writer_stream(struct mh_writer *writer, const char *path, char *buffer, size_t capacity);
MH_HIDDEN int mh_writer_attach(struct mh_writer *writer, int fd, bool append, char *buffer, size_t capacity);
MH_HIDDEN void mh_writer_header(struct mh_writer *writer, enum mh_file_kind kind);
MH_HIDDEN void mh_writer_flush(struct mh_writer *writer);
MH_HIDDEN int mh_writer_finish(struct mh_writer *writer, bool keep);  // closes an owned file; 0 or an errno
MH_HIDDEN void mh_put(struct mh_writer *writer, const void *bytes, size_t length);
MH_HIDDEN void mh_put_u32(struct mh_writer *writer, uint32_t value);
MH_HIDDEN void mh_put_u64(struct mh_writer *writer, uint64_t value);
MH_HIDDEN uint64_t mh_writer_position(const struct mh_writer *writer);
MH_HIDDEN void mh_patch_u64(struct mh_writer *writer, uint64_t at, uint64_t value);
MH_HIDDEN void mh_put_text(struct mh_writer *writer, const char *text);
MH_HIDDEN void mh_put_char(struct mh_writer *writer, char c);
MH_HIDDEN void mh_put_decimal(struct mh_writer *writer, int64_t value);
MH_HIDDEN void mh_put_address(struct mh_writer *writer, uint64_t value);
MH_HIDDEN void mh_put_path(struct mh_writer *writer, const char *path);  // a newline in it becomes '?'
MH_HIDDEN void mh_put_key(struct mh_writer *writer, const char *key, int64_t value);  // "key value\n"

// ---- Held at exit for the capture's reader (hold.c) ----------------------------------------------
// The exit path's last step: waits for MEMHARNESS_AGENT_HOLD_AT_EXIT's reader (every file is written by then).
MH_HIDDEN void mh_hold_at_exit(int status, const struct mh_stopped *caller);

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
MH_HIDDEN void mh_release_deferred(void *block);  // a release a signal handler asked for, done now (agent.c)
MH_HIDDEN void mh_insert_deferred(void *block, int64_t bytes);

#endif
