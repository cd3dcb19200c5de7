// A heap capture: with the lifecycle and every lock of the agent held and every other thread stopped (world.c), the
// table of live blocks is copied and sorted (sort.c), every pointer from a root (roots.c) or a live block into a live
// block is found, and all of it is written, with each block's allocation stack, for the harness to name and analyse
// (HeapGraph's CaptureFile reader is the format's specification).
//
// Costs: the world stays stopped while the heap is scanned (0.15-0.3 s for a million blocks here,
// Reports/benchmarks/heap-graph.md); the sorted copy takes 16 bytes a block meanwhile, with a 1 MiB buffer, 512 KiB
// for the stacks written and the text of /proc/self/maps (the capture's only memory: all mappings, nothing allocated).
//
// Where it goes: a named file (through `path`.tmp and a rename), or a descriptor the caller owns (appended at its end:
// the harness's captures go to a file that has no name, so nothing is left whatever ends the process).
#include "agent_internal.h"

#include <sched.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static char capture_failure[256];

static int fail(const char *reason, int code) {
    size_t length = strlen(reason);
    if (length > sizeof(capture_failure) - 1) length = sizeof(capture_failure) - 1;
    memcpy(capture_failure, reason, length);
    capture_failure[length] = 0;
    return code;
}

const char *memharness_agent_heap_failure(void) { return capture_failure; }
int memharness_agent_heap_enabled(void) {
    return mh_blocks_ready() && (atomic_load_explicit(&mh_state, memory_order_relaxed) & MH_BLOCKS) != 0;
}
int64_t memharness_agent_heap_blocks(void) { return memharness_agent_heap_enabled() ? mh_blocks_count() : -1; }

// ---- Sections -------------------------------------------------------------------------------------------------------
static void thread_name(int32_t tid, char name[16]) {
    char path[64];
    char *p = mh_put_str(path, "/proc/self/task/");
    p = mh_put_i64(p, tid);
    p = mh_put_str(p, "/comm");
    *p = 0;
    memset(name, 0, 16);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, name, 15);
    close(fd);
    for (ssize_t i = 0; i < n; i++) {
        if (name[i] == '\n') name[i] = 0;
    }
}

static void put_thread(struct mh_writer *writer, const struct mh_stopped *thread, uint32_t state) {
    mh_put_u32(writer, (uint32_t)thread->tid);
    mh_put_u32(writer, state);
    mh_put_u64(writer, thread->sp);
    mh_put_u64(writer, thread->pc);
    mh_put_u64(writer, thread->tp);
    char name[16];
    thread_name(thread->tid, name);
    mh_put(writer, name, 16);
    // The chain of frame pointers, to tell which function's frame holds a stack root.
    uintptr_t frames[2 * 128];
    uint32_t depth = 0;
    const struct mh_range *stack = thread->sp != 0 ? mh_mapping_of(thread->sp) : NULL;
    for (uintptr_t fp = thread->fp; stack != NULL && depth < 128;) {
        if ((fp & 7) != 0 || fp < thread->sp || fp + 16 > stack->end) break;
        frames[2 * depth] = fp;
        frames[2 * depth + 1] = ((const uintptr_t *)fp)[1];
        depth++;
        uintptr_t caller = ((const uintptr_t *)fp)[0];
        if (caller <= fp) break;
        fp = caller;
    }
    mh_put_u32(writer, depth);
    mh_put_u32(writer, 0);
    mh_put(writer, frames, sizeof(uintptr_t) * 2 * depth);
}

// After the shared first line: flags (bit 0: a thread did not stop; bit 1: blocks went untracked or stayed listed
// after their release), the time, the threads signalled and those that did not stop, the label.
static void put_header(struct mh_writer *writer, const char *label, const struct mh_world *world) {
    mh_writer_header(writer, MH_FILE_CAPTURE);
    uint32_t flags = (world->unstopped > 0 ? 1u : 0u) | (mh_blocks_lost() > 0 ? 2u : 0u);
    mh_put_u32(writer, flags);
    mh_put_u64(writer, (uint64_t)mh_relative_ns());
    mh_put_u32(writer, (uint32_t)world->signalled_count);
    mh_put_u32(writer, (uint32_t)world->unstopped);
    char text[64] = {0};
    size_t length = label != NULL ? strnlen(label, 63) : 0;
    if (length > 0) memcpy(text, label, length);
    mh_put(writer, text, 64);
}

static void put_threads(struct mh_writer *writer, const struct mh_stopped *self, const struct mh_stopped *stopped,
                        uint32_t count) {
    mh_put_u64(writer, (uint64_t)count + 1);
    put_thread(writer, self, 2);  // 2: the capturing thread itself
    for (uint32_t i = 0; i < count; i++) put_thread(writer, &stopped[i], 1);
}

// Each block, with its allocation stack's id; `seen` gets a bit per id written (for the stacks section).
static void put_blocks(struct mh_writer *writer, const struct mh_sorted *sorted, uint64_t *seen) {
    mh_put_u64(writer, sorted->count);
    for (uint64_t i = 0; i < sorted->count; i++) {
        const struct mh_block_slot *block = &sorted->blocks[i];
        const uintptr_t *words = (const uintptr_t *)block->address;
        uint64_t bytes = mh_block_bytes(block);
        uint32_t stack = mh_block_stack(block);
        if (stack != 0) seen[stack / 64] |= (uint64_t)1 << (stack % 64);
        mh_put_u64(writer, block->address);
        mh_put_u64(writer, bytes);
        mh_put_u64(writer, words[0]);
        mh_put_u64(writer, bytes >= 16 ? words[1] : 0);
        mh_put_u64(writer, stack);
    }
}

static void put_edges(struct mh_writer *writer, const struct mh_sorted *sorted) {
    uint64_t at = mh_writer_position(writer), edges = 0;
    mh_put_u64(writer, 0);
    for (uint64_t i = 0; i < sorted->count; i++) {
        const uintptr_t *words = (const uintptr_t *)sorted->blocks[i].address;
        uint64_t count = mh_block_bytes(&sorted->blocks[i]) / 8;
        for (uint64_t w = 0; w < count; w++) {
            int64_t target = mh_block_of(sorted, words[w]);
            if (target < 0) continue;
            mh_put_u32(writer, (uint32_t)i);
            mh_put_u32(writer, (uint32_t)target);
            mh_put_u64(writer, w * 8);
            edges++;
        }
    }
    mh_patch_u64(writer, at, edges);
}

// Every stack a block refers to: its id, depth and return addresses (innermost first).
static void put_stacks(struct mh_writer *writer, const uint64_t *seen) {
    uint64_t at = mh_writer_position(writer), count = 0;
    mh_put_u64(writer, 0);
    for (uint32_t word = 0; word < MH_MAX_STACKS / 64; word++) {
        for (uint64_t bits = seen[word]; bits != 0; bits &= bits - 1) {
            uint32_t id = word * 64 + (uint32_t)__builtin_ctzll(bits);
            const uintptr_t *frames = NULL;
            int depth = mh_stack_frames(id, &frames);
            mh_put_u32(writer, id);
            mh_put_u32(writer, (uint32_t)depth);
            mh_put(writer, frames, sizeof(uintptr_t) * (size_t)depth);
            count++;
        }
    }
    mh_patch_u64(writer, at, count);
}

// Everything between the stop and the resume: the file, or false when a mapping could not be had.
static bool write_stopped(struct mh_writer *writer, const char *label, const struct mh_world *world,
                          const struct mh_stopped *self) {
    struct mh_sorted sorted = {0};
    size_t region_bytes = 0;
    uint64_t *seen = mh_map(MH_MAX_STACKS / 8);
    bool mapped = seen != NULL && mh_sorted_take(&sorted, &region_bytes);
    if (mapped) {
        const struct mh_stopped *stopped;
        uint32_t stopped_count = mh_world_stopped(&stopped);
        put_header(writer, label, world);
        mh_put_layout(writer);
        put_threads(writer, self, stopped, stopped_count);
        mh_put_roots(writer, &sorted, self, stopped, stopped_count);
        put_blocks(writer, &sorted, seen);
        put_edges(writer, &sorted);
        put_stacks(writer, seen);
        mh_writer_flush(writer);
    }
    if (sorted.blocks != NULL) munmap(sorted.blocks, region_bytes);
    if (seen != NULL) munmap(seen, MH_MAX_STACKS / 8);
    return mapped;
}

// ---- The capture ----------------------------------------------------------------------------------------------------
// One capture into `writer` (opened by the caller, who holds the lifecycle): every module's locks, the world stopped,
// written, resumed, unlocked. `self`: the capturing thread's program frames and registers (`sp` 0: none). With `hold`,
// once the capture is written it runs with the world still stopped and the modules unlocked (the sampler thread, which
// never stops, goes on sampling rather than spinning on its lock), and the world resumes after it. 0 or an errno.
static int capture(struct mh_writer *writer, const char *label, const struct mh_stopped *self, void (*hold)(void)) {
    const char *problem = mh_world_prepare();
    if (problem != NULL) return fail(problem, EBUSY);
    mh_layout_read_modules();
    mh_lock_modules();
    static struct mh_world world;
    mh_world_stop(&world);
    // The mappings are read with the world stopped: a thread that unmapped or protected memory between a reading and
    // the scan would make the scan fault.
    bool mapped = mh_layout_read_mappings((uintptr_t)writer->buffer);
    bool written = mapped && write_stopped(writer, label, &world, self) && writer->error == 0;
    if (written && hold != NULL) {
        mh_unlock_modules();
        hold();
        mh_world_resume(&world);
    } else {
        mh_world_resume(&world);
        mh_unlock_modules();
    }
    if (!mapped) return fail("cannot read /proc/self/maps", EIO);
    if (!written) return fail("cannot map the capture's buffers", ENOMEM);
    return 0;
}

// A capture to `path`, or appended to `fd` when `path` is NULL. Captures queue on the lifecycle lock, one at a time
// (a second waits for the first, stopped with the world meanwhile). 0 or an errno, the reason in capture_failure.
static int capture_to(const char *path, int fd, const char *label, const struct mh_stopped *self,
                      void (*hold)(void)) {
    if (!memharness_agent_heap_enabled()) return fail("the agent does not track blocks (MEMHARNESS_AGENT_HEAP=1)", ENOTSUP);
    if (mh_tls.depth > 0 || mh_tls.forking) {
        return fail("a capture from a signal handler that interrupted the agent or a fork", EBUSY);
    }
    struct mh_thread *thread = &mh_tls;
    thread->guard++;
    mh_lifecycle_enter();
    static struct mh_writer writer;  // its path alone is 4 KiB: not on the stack of a thread that may have little
    size_t capacity = (size_t)1 << 20;
    char *buffer = mh_map(capacity);
    int code;
    if (buffer == NULL) {
        code = fail("cannot map the capture's buffer", ENOMEM);
    } else if ((code = path != NULL ? mh_writer_open(&writer, path, buffer, capacity)
                                    : mh_writer_attach(&writer, fd, true, buffer, capacity)) != 0) {
        code = fail(path != NULL ? "cannot create the capture file" : "cannot write to the capture's descriptor", code);
    } else {
        code = capture(&writer, label, self, hold);
        int finished = mh_writer_finish(&writer, code == 0);
        if (code == 0 && finished != 0) code = fail("cannot write the capture file (disk full?)", finished);
    }
    if (buffer != NULL) munmap(buffer, capacity);
    if (code == 0) capture_failure[0] = 0;
    mh_lifecycle_leave();
    thread->guard--;
    return code;
}

// The calling thread's callee-saved registers at entry (the only registers a caller can keep a pointer in across the
// call), and its caller's frame.
#define MH_CALLER_STATE(self)                                                                                           \
    do {                                                                                                                \
        (self)->tid = mh_thread_id();                                                                                   \
        (self)->tp = mh_thread_pointer();                                                                               \
        (self)->fp = *(const uintptr_t *)__builtin_frame_address(0);                                                    \
        (self)->sp = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(uintptr_t);                                     \
        (self)->pc = (uintptr_t)__builtin_return_address(0);                                                            \
        MH_CALLEE_SAVED((self)->registers);                                                                             \
    } while (0)
#if defined(__x86_64__)
// Stored where the signal context keeps them (gregs: REG_RBX 11, REG_RBP 10, REG_R12...R15 4...7).
#define MH_CALLEE_SAVED(r)                                                                                              \
    __asm__ volatile("mov %%rbx, %0\n\tmov %%r12, %1\n\tmov %%r13, %2\n\tmov %%r14, %3\n\tmov %%r15, %4"                  \
                     : "=m"((r)[11]), "=m"((r)[4]), "=m"((r)[5]), "=m"((r)[6]), "=m"((r)[7]))
#elif defined(__aarch64__)
#define MH_CALLEE_SAVED(r)                                                                                              \
    __asm__ volatile("stp x19, x20, [%0, #152]\n\tstp x21, x22, [%0, #168]\n\tstp x23, x24, [%0, #184]\n\t"            \
                     "stp x25, x26, [%0, #200]\n\tstp x27, x28, [%0, #216]"                                             \
                     : : "r"(r) : "memory")
#else
#define MH_CALLEE_SAVED(r) ((void)(r))
#endif

// A C program's own capture: its frames from the caller of this function up, and its callee-saved registers.
__attribute__((noinline)) int memharness_agent_capture_heap(const char *path, const char *label) {
    struct mh_stopped self;
    memset(&self, 0, sizeof(self));
    MH_CALLER_STATE(&self);
    if (path == NULL || strlen(path) > MH_PATH_CAPACITY - 8) return fail("no path, or a path too long", EINVAL);
    return capture_to(path, -1, label, &self, NULL);
}

// The harness's capture (in-process): appended to `fd`; with `caller_frames`, the capturing thread's frames from the
// caller of this function up and its callee-saved registers are the program's (as memharness_agent_capture_heap takes
// them), without, none of them is (its thread-local storage still is).
__attribute__((noinline)) int memharness_agent_capture_heap_fd(int fd, const char *label, int caller_frames) {
    struct mh_stopped self;
    memset(&self, 0, sizeof(self));
    if (caller_frames) {
        MH_CALLER_STATE(&self);
    } else {
        self.tid = mh_thread_id();
        self.tp = mh_thread_pointer();
    }
    if (fd < 0) return fail("no descriptor", EINVAL);
    return capture_to(NULL, fd, label, &self, NULL);
}

// ---- At the peak ----------------------------------------------------------------------------------------------------
// While armed (memharness_agent_arm_peak_capture), the first release that finds the listed bytes at least the margin
// above the last capture's level captures the heap, before the block goes: the heap as it stood at its high, every
// block of the high still live. So the file holds a capture at most the margin below the true peak of the listed bytes
// (a heap that rises on past a capture by less than the margin is not captured again), and a heap that rises from L
// to P is captured about log(P / L) / log(1 + margin) times, each replacing the one before: the cost is about
// (1 + margin) / margin captures of the peak's size, and only the last one is kept. The trigger is a release, not an
// allocation: an allocation's new block is not yet stored anywhere a root reaches, a release's block still is, or is
// garbage the program is letting go of (then it shows as unreachable in this capture, which no verdict reads).
// Captures run one at a time; a release meanwhile goes on without one. Never from the harness's own calls (`guard`)
// or a thread that holds an agent lock.
static struct {
    _Atomic int armed;
    _Atomic int busy;
    _Atomic int64_t threshold;  // the next capture is due when the listed bytes reach it
    _Atomic int64_t high;       // the highest listed bytes seen while armed
    int fd;
    double margin;
    int64_t minimum_step;
    int64_t captured_level;  // the listed bytes of the last capture; -1: none, or the last one failed
    int64_t captures;
    int64_t capture_ns;  // the time the captures took, together
} peak = {.captured_level = -1};

static int64_t peak_threshold(int64_t level) {
    double by = (double)level * peak.margin;
    int64_t step = by > (double)peak.minimum_step ? (int64_t)by : peak.minimum_step;
    return level > INT64_MAX - step ? INT64_MAX : level + step;
}

void mh_peak_note_live(int64_t now) {
    if (!atomic_load_explicit(&peak.armed, memory_order_relaxed)) return;
    int64_t high = atomic_load_explicit(&peak.high, memory_order_relaxed);
    while (now > high &&
           !atomic_compare_exchange_weak_explicit(&peak.high, &high, now, memory_order_relaxed, memory_order_relaxed)) {
    }
}

bool mh_peak_due(void) {
    return atomic_load_explicit(&peak.armed, memory_order_relaxed) &&
           atomic_load_explicit(&mh_blocks_live_bytes, memory_order_relaxed) >=
               atomic_load_explicit(&peak.threshold, memory_order_relaxed);
}

// `frame`: the frame of the agent's release function whose return address is the program's; the program's frames are
// those above it (as a walk skips the agent's leading frames).
void mh_capture_at_peak(void *frame) {
    struct mh_thread *thread = &mh_tls;
    if (thread->guard > 0 || thread->depth > 0 || thread->flushing || thread->forking) return;
    int idle = 0;
    if (!atomic_compare_exchange_strong_explicit(&peak.busy, &idle, 1, memory_order_acquire, memory_order_relaxed)) {
        return;
    }
    int64_t level = atomic_load_explicit(&mh_blocks_live_bytes, memory_order_relaxed);
    if (atomic_load_explicit(&peak.armed, memory_order_relaxed) &&
        level >= atomic_load_explicit(&peak.threshold, memory_order_relaxed)) {
        struct mh_stopped self;
        memset(&self, 0, sizeof(self));
        const uintptr_t *record = frame;
        for (int up = 0; up < 4 && record[1] >= mh_text_lo && record[1] < mh_text_hi; up++) {
            record = (const uintptr_t *)record[0];
        }
        self.tid = mh_thread_id();
        self.tp = mh_thread_pointer();
        self.fp = record[0];
        self.sp = (uintptr_t)record + 2 * sizeof(uintptr_t);
        self.pc = record[1];
        MH_CALLEE_SAVED(self.registers);
        // One capture in the file, the latest: a failed one leaves none.
        int64_t start = mh_relative_ns();
        bool written = ftruncate(peak.fd, 0) == 0 && capture_to(NULL, peak.fd, "at the peak", &self, NULL) == 0;
        peak.capture_ns += mh_relative_ns() - start;
        peak.captured_level = written ? level : -1;
        peak.captures++;
        atomic_store_explicit(&peak.threshold, peak_threshold(level), memory_order_relaxed);
    }
    atomic_store_explicit(&peak.busy, 0, memory_order_release);
}

int memharness_agent_arm_peak_capture(int fd, double margin, int64_t minimum_step_bytes) {
    if (!memharness_agent_heap_enabled()) return ENOTSUP;
    if (fd < 0 || !(margin > 0) || minimum_step_bytes < 0) return EINVAL;
    int idle = 0;
    while (!atomic_compare_exchange_weak_explicit(&peak.busy, &idle, 1, memory_order_acquire, memory_order_relaxed)) {
        idle = 0;
        sched_yield();
    }
    peak.fd = fd;
    peak.margin = margin;
    peak.minimum_step = minimum_step_bytes;
    peak.captured_level = -1;
    peak.captures = 0;
    peak.capture_ns = 0;
    int64_t level = atomic_load_explicit(&mh_blocks_live_bytes, memory_order_relaxed);
    atomic_store_explicit(&peak.high, level, memory_order_relaxed);
    atomic_store_explicit(&peak.threshold, peak_threshold(level), memory_order_relaxed);
    atomic_store_explicit(&peak.armed, 1, memory_order_release);
    atomic_store_explicit(&peak.busy, 0, memory_order_release);
    return 0;
}

int64_t memharness_agent_disarm_peak_capture(int64_t *peak_bytes, int64_t *captures, int64_t *capture_ns) {
    int idle = 0;
    while (!atomic_compare_exchange_weak_explicit(&peak.busy, &idle, 1, memory_order_acquire, memory_order_relaxed)) {
        idle = 0;
        sched_yield();
    }
    atomic_store_explicit(&peak.armed, 0, memory_order_relaxed);
    if (peak_bytes != NULL) *peak_bytes = atomic_load_explicit(&peak.high, memory_order_relaxed);
    if (captures != NULL) *captures = peak.captures;
    if (capture_ns != NULL) *capture_ns = peak.capture_ns;
    int64_t level = peak.captured_level;
    atomic_store_explicit(&peak.busy, 0, memory_order_release);
    return level;
}

// ---- At exit --------------------------------------------------------------------------------------------------------
// The heap as the program leaves it (MEMHARNESS_AGENT_HEAP_AT_EXIT): after its atexit handlers and library
// destructors, what no root reaches is what it leaked, as valgrind's and LeakSanitizer's reports at exit. The exiting
// thread's program frames are those of exit's caller and above (`caller`), or none when main returned: the agent's exit
// handler, and the handlers and destructors that ran below exit's caller, left only stale words there.
void mh_capture_at_exit(int status, const struct mh_stopped *caller) {
    (void)status;
    if (mh_config.heap_at_exit_path[0] == 0) return;
    if (mh_forked_child && !mh_pattern_has_pid(mh_config.heap_at_exit_path)) return;
    static char path[MH_PATH_CAPACITY];  // static: not a stack buffer below the program's frames (and 4 KiB)
    struct mh_stopped none = {.tid = mh_thread_id(), .tp = mh_thread_pointer()};
    if (!mh_expand_path(mh_config.heap_at_exit_path, path, sizeof(path))) {
        mh_warn("MEMHARNESS_AGENT_HEAP_AT_EXIT is too long once %p is replaced; no heap capture");
    } else if (capture_to(path, -1, "at exit", caller != NULL ? caller : &none, NULL) != 0) {
        mh_warn("the heap capture at exit failed");
    }
}

// ---- On request -----------------------------------------------------------------------------------------------------
// A capture the harness asked for while the program runs (request.c), appended to `fd`, from a thread of the agent's
// own: no frame, register or stack of it is the program's. `hold` runs with the capture written and the world stopped.
int mh_capture_requested(int fd, const char *label, void (*hold)(void)) {
    struct mh_stopped none = {.tid = mh_thread_id()};
    return capture_to(NULL, fd, label, &none, hold);
}
