// The heap graph's two halves in the agent: a table of every live block (MEMHARNESS_AGENT_HEAP=1), and the
// capture, which stops the world, finds every pointer from a live block or a root into a live block, and
// writes them to a file for the harness to name and analyse (HeapGraph's capture reader).
//
// The table. Every allocation of the malloc family and operator new is inserted (address, size-class
// bytes) and every release removed, in one of 256 open-addressing shards (linear probing, backward-shift
// deletion: no tombstones), each behind its own lock and grown by doubling into a fresh mapping. It is
// created at the first call into the agent, before libc's start-up allocates, so no live block predates it.
//
// Stopping the world: signals, as the Boehm collector does on Linux, not ptrace as LeakSanitizer does. The
// capturing thread takes every lock of the agent (so no thread is halfway through a table update), then sends
// MH_STOP_SIGNAL to every other thread of /proc/self/task with tgkill; each one's handler saves its registers,
// stack pointer and thread pointer into a slot and waits on a futex until the capture is over. A thread
// blocked in a system call is interrupted and its registers are those of the call (SA_RESTART resumes it
// afterwards), so a pointer held only in a register of a sleeping thread is a root. Why not ptrace: a
// process cannot trace threads of its own thread group, so LeakSanitizer clones a tracer task, which needs
// the kernel's ptrace permission (Yama) and is far more code; why not a forked snapshot: the child has only
// the forking thread, so every other thread's registers would be lost. Costs: the world stays stopped while
// the heap is scanned (0.15-0.3 s for a million blocks here, Reports/benchmarks/heap-graph.md), and the table's
// sorted copy takes 16 bytes a block meanwhile (the capture's only memory but a 1 MiB buffer and the text of
// /proc/self/maps); a thread that blocks the signal is not stopped
// (the capture says how many, and is marked approximate); the agent's sampler thread is skipped (it holds
// no pointer into the program's heap and blocks every signal). No code of the capture allocates: its
// buffers are mappings, its reads of /proc raw system calls, its sort its own.
//
// Roots: the writable PT_LOAD segments of every loaded module but the agent's (globals, statics and .bss),
// each thread's stack from its stack pointer (less the red zone) to the end of the stack's mapping, each
// thread's static TLS and thread control block around its thread pointer, and each stopped thread's
// general registers. An edge is a word of a block or a root that, with Swift's spare bits cleared
// (0xFF00000000000007 on x86_64: enum tags, bridge-object flags), falls inside a live block: interior
// pointers count. What is not scanned: memory the program maps itself (mmap outside malloc) and blocks
// allocated before the table existed (none, see above).
#include "agent_internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

// ---- The table of live blocks ----------------------------------------------------------------------------------
#define MH_HEAP_SHARD_BITS 8
#define MH_HEAP_SHARDS (1u << MH_HEAP_SHARD_BITS)
#define MH_HEAP_INITIAL_LOG2 10  // 1,024 slots (16 KiB) a shard to start with

struct mh_block_slot {
    uintptr_t address;  // 0: empty
    uint64_t bytes;     // size-class bytes
};

struct mh_heap_shard {
    mh_lock lock;
    uint32_t capacity_log2;
    uint64_t count;
    struct mh_block_slot *slots;
} __attribute__((aligned(64)));

static struct mh_heap_shard heap_shards[MH_HEAP_SHARDS];
static bool heap_ready;

bool mh_heap_init(void) {
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) {
        heap_shards[i].capacity_log2 = MH_HEAP_INITIAL_LOG2;
        heap_shards[i].slots = mh_map(sizeof(struct mh_block_slot) << MH_HEAP_INITIAL_LOG2);
        if (heap_shards[i].slots == NULL) return false;
    }
    heap_ready = true;
    return true;
}

static inline struct mh_heap_shard *heap_shard_of(uint64_t hash) { return &heap_shards[hash >> (64 - MH_HEAP_SHARD_BITS)]; }
static inline size_t heap_home(uint64_t hash, uint32_t capacity_log2) {
    return (size_t)((hash << MH_HEAP_SHARD_BITS) >> (64 - capacity_log2));
}

static void place(struct mh_block_slot *slots, uint32_t capacity_log2, uintptr_t address, uint64_t bytes) {
    size_t mask = ((size_t)1 << capacity_log2) - 1;
    size_t index = heap_home(mh_pointer_hash((const void *)address), capacity_log2);
    while (slots[index].address != 0) index = (index + 1) & mask;
    slots[index] = (struct mh_block_slot){address, bytes};
}

// Doubles a shard at half full; when no mapping can be had the shard fills up further (probes get longer).
static void grow(struct mh_heap_shard *shard) {
    uint32_t next_log2 = shard->capacity_log2 + 1;
    struct mh_block_slot *bigger = mh_map(sizeof(struct mh_block_slot) << next_log2);
    if (bigger == NULL) return;
    size_t capacity = (size_t)1 << shard->capacity_log2;
    for (size_t i = 0; i < capacity; i++) {
        if (shard->slots[i].address != 0) place(bigger, next_log2, shard->slots[i].address, shard->slots[i].bytes);
    }
    munmap(shard->slots, sizeof(struct mh_block_slot) * capacity);
    shard->slots = bigger;
    shard->capacity_log2 = next_log2;
}

void mh_heap_insert(void *block, int64_t bytes) {
    uint64_t hash = mh_pointer_hash(block);
    struct mh_heap_shard *shard = heap_shard_of(hash);
    mh_acquire(&shard->lock);
    size_t capacity = (size_t)1 << shard->capacity_log2;
    // Full but for one slot (no mapping for a bigger table): the block goes untracked rather than loop forever.
    if (shard->count + 1 >= capacity / 2) grow(shard);
    capacity = (size_t)1 << shard->capacity_log2;
    if (shard->count + 1 < capacity) {
        place(shard->slots, shard->capacity_log2, (uintptr_t)block, (uint64_t)bytes);
        shard->count++;
    }
    mh_release_lock(&shard->lock);
}

void mh_heap_remove(void *block) {
    uint64_t hash = mh_pointer_hash(block);
    struct mh_heap_shard *shard = heap_shard_of(hash);
    mh_acquire(&shard->lock);
    size_t mask = ((size_t)1 << shard->capacity_log2) - 1;
    struct mh_block_slot *slots = shard->slots;
    size_t index = heap_home(hash, shard->capacity_log2);
    while (slots[index].address != 0 && slots[index].address != (uintptr_t)block) index = (index + 1) & mask;
    if (slots[index].address != 0) {
        // Backward-shift deletion: later entries of the run move up when their home allows it.
        size_t hole = index;
        for (size_t next = (hole + 1) & mask; slots[next].address != 0; next = (next + 1) & mask) {
            size_t home = heap_home(mh_pointer_hash((const void *)slots[next].address), shard->capacity_log2);
            bool movable = hole <= next ? (home <= hole || home > next) : (home <= hole && home > next);
            if (movable) {
                slots[hole] = slots[next];
                hole = next;
            }
        }
        slots[hole] = (struct mh_block_slot){0, 0};
        shard->count--;
    }
    mh_release_lock(&shard->lock);
}

int64_t mh_heap_block_count(void) {
    int64_t count = 0;
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) count += (int64_t)heap_shards[i].count;  // a racy sum: a reading
    return count;
}

static void heap_lock_all(void) {
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) mh_acquire(&heap_shards[i].lock);
}
static void heap_unlock_all(void) {
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) mh_release_lock(&heap_shards[i].lock);
}

void mh_heap_fork_prepare(void) {
    if (heap_ready) heap_lock_all();
}
void mh_heap_fork_parent(void) {
    if (heap_ready) heap_unlock_all();
}
void mh_heap_fork_child(void) {
    if (!heap_ready) return;
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) mh_reset_lock(&heap_shards[i].lock);
}

// ---- Stopping the world ----------------------------------------------------------------------------------------
#define MH_MAX_THREADS 4096
#define MH_STOP_SIGNAL (SIGRTMAX - 3)
#if defined(__x86_64__)
#define MH_REGISTERS NGREG
#elif defined(__aarch64__)
#define MH_REGISTERS 34
#else
#define MH_REGISTERS 0
#endif

struct mh_stopped {
    int32_t tid;
    uintptr_t sp, pc, fp, tp;
    uintptr_t registers[MH_REGISTERS > 0 ? MH_REGISTERS : 1];
};

static struct {
    _Atomic uint32_t generation;  // odd while a capture holds the world
    _Atomic uint32_t arrived;
    _Atomic uint32_t left;
    _Atomic uint32_t slots_taken;
    struct mh_stopped threads[MH_MAX_THREADS];
} stop;
static mh_lock capture_lock;
static bool handler_installed;

static inline uintptr_t thread_pointer(void) {
    uintptr_t tp = 0;
#if defined(__x86_64__)
    __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
#endif
    return tp;
}

static long futex(_Atomic uint32_t *word, int operation, uint32_t value, const struct timespec *timeout) {
    return syscall(SYS_futex, (uint32_t *)word, operation, value, timeout, NULL, 0);
}

static void stop_handler(int signal, siginfo_t *info, void *context) {
    (void)signal;
    int saved_errno = errno;
    uint32_t generation = atomic_load_explicit(&stop.generation, memory_order_acquire);
    // A signal that is not ours (another process's) or arrives after the capture ended: nothing to do.
    if ((generation & 1) == 0 || info->si_code != SI_TKILL || info->si_pid != getpid()) {
        errno = saved_errno;
        return;
    }
    uint32_t slot = atomic_fetch_add_explicit(&stop.slots_taken, 1, memory_order_relaxed);
    if (slot < MH_MAX_THREADS) {
        struct mh_stopped *me = &stop.threads[slot];
        ucontext_t *ucontext = context;
        me->tid = (int32_t)syscall(SYS_gettid);
        me->tp = thread_pointer();
#if defined(__x86_64__)
        for (int i = 0; i < MH_REGISTERS; i++) me->registers[i] = (uintptr_t)ucontext->uc_mcontext.gregs[i];
        me->sp = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RSP];
        me->pc = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RIP];
        me->fp = (uintptr_t)ucontext->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
        for (int i = 0; i < 31; i++) me->registers[i] = (uintptr_t)ucontext->uc_mcontext.regs[i];
        me->registers[31] = me->sp = (uintptr_t)ucontext->uc_mcontext.sp;
        me->registers[32] = me->pc = (uintptr_t)ucontext->uc_mcontext.pc;
        me->fp = (uintptr_t)ucontext->uc_mcontext.regs[29];
#else
        me->sp = (uintptr_t)__builtin_frame_address(0);
#endif
    }
    atomic_fetch_add_explicit(&stop.arrived, 1, memory_order_release);
    futex(&stop.arrived, FUTEX_WAKE_PRIVATE, 1, NULL);
    while (atomic_load_explicit(&stop.generation, memory_order_acquire) == generation) {
        futex(&stop.generation, FUTEX_WAIT_PRIVATE, generation, NULL);
    }
    atomic_fetch_add_explicit(&stop.left, 1, memory_order_release);
    futex(&stop.left, FUTEX_WAKE_PRIVATE, 1, NULL);
    errno = saved_errno;
}

// Installed once and kept: a signal still pending for a thread that blocked it must never meet the default
// action (which ends the process). A program that handles the same signal itself makes captures fail.
static const char *install_handler(void) {
    if (handler_installed) return NULL;
    struct sigaction current;
    if (sigaction(MH_STOP_SIGNAL, NULL, &current) != 0) return "cannot read the stop signal's disposition";
    if ((current.sa_flags & SA_SIGINFO) ? current.sa_sigaction != NULL
                                        : (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN)) {
        return "the program handles SIGRTMAX-3 itself, which the capture uses to stop threads";
    }
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = stop_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&action.sa_mask);
    if (sigaction(MH_STOP_SIGNAL, &action, NULL) != 0) return "cannot install the stop signal's handler";
    handler_installed = true;
    return NULL;
}

// The thread ids of /proc/self/task, read with getdents64 (opendir allocates); the count, or -1.
static int list_threads(int32_t *tids, int capacity) {
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[8192];
    int count = 0;
    for (;;) {
        long read = syscall(SYS_getdents64, fd, buffer, sizeof(buffer));
        if (read <= 0) break;
        for (long offset = 0; offset < read;) {
            struct {
                uint64_t inode;
                int64_t offset;
                unsigned short length;
                unsigned char type;
                char name[];
            } *entry = (void *)(buffer + offset);
            int32_t tid = 0;
            const char *name = entry->name;
            for (; *name >= '0' && *name <= '9'; name++) tid = tid * 10 + (*name - '0');
            if (*name == 0 && tid > 0 && count < capacity) tids[count++] = tid;
            offset += entry->length;
        }
    }
    close(fd);
    return count;
}

static bool contains(const int32_t *tids, int count, int32_t tid) {
    for (int i = 0; i < count; i++) {
        if (tids[i] == tid) return true;
    }
    return false;
}

// Waits until `arrived` reaches `expected` or the deadline passes; the count that arrived.
static uint32_t wait_arrivals(uint32_t expected, int64_t deadline_ns) {
    for (;;) {
        uint32_t arrived = atomic_load_explicit(&stop.arrived, memory_order_acquire);
        int64_t now = mh_now_ns();
        if (arrived >= expected || now >= deadline_ns) return arrived;
        int64_t left = deadline_ns - now;
        if (left > 10000000) left = 10000000;
        struct timespec timeout = {.tv_sec = 0, .tv_nsec = left};
        futex(&stop.arrived, FUTEX_WAIT_PRIVATE, arrived, &timeout);
    }
}

struct mh_world {
    int32_t signalled[MH_MAX_THREADS];
    int signalled_count;
    int unstopped;  // signalled but not arrived by the deadline
};

// Signals every thread but this one and the sampler until no new thread appears; bounded by 1 s in all.
static void stop_world(struct mh_world *world) {
    int32_t self = (int32_t)syscall(SYS_gettid);
    int32_t sampler = (int32_t)mh_sampler_tid();
    static int32_t tids[MH_MAX_THREADS];
    int64_t deadline = mh_now_ns() + 1000000000;
    world->signalled_count = 0;
    for (int round = 0; round < 16; round++) {
        int count = list_threads(tids, MH_MAX_THREADS);
        int sent = 0;
        for (int i = 0; i < count; i++) {
            int32_t tid = tids[i];
            if (tid == self || tid == sampler || contains(world->signalled, world->signalled_count, tid)) continue;
            if (world->signalled_count == MH_MAX_THREADS) break;
            if (syscall(SYS_tgkill, getpid(), tid, MH_STOP_SIGNAL) == 0) {
                world->signalled[world->signalled_count++] = tid;
                sent++;
            }
        }
        if (sent == 0) break;
        wait_arrivals((uint32_t)world->signalled_count, deadline);
    }
    // A thread that exited between the listing and its signal never arrives: it is not waited for again.
    uint32_t arrived = wait_arrivals((uint32_t)world->signalled_count, deadline);
    world->unstopped = world->signalled_count - (int)arrived;
}

static void resume_world(struct mh_world *world) {
    uint32_t arrived = atomic_load_explicit(&stop.arrived, memory_order_acquire);
    atomic_fetch_add_explicit(&stop.generation, 1, memory_order_release);
    futex(&stop.generation, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
    // Bounded: a thread that has not left its handler in 1 s leaves it later by itself (the generation moved).
    int64_t deadline = mh_now_ns() + 1000000000;
    for (;;) {
        uint32_t left = atomic_load_explicit(&stop.left, memory_order_acquire);
        if (left >= arrived || mh_now_ns() >= deadline) break;
        struct timespec timeout = {.tv_sec = 0, .tv_nsec = 5000000};
        futex(&stop.left, FUTEX_WAIT_PRIVATE, left, &timeout);
    }
    (void)world;
}

// ---- What the capture reads: modules and mappings ------------------------------------------------------------------
#define MH_MAX_SEGMENTS 2048
#define MH_MAX_MAPPINGS 65536

struct mh_segment {
    uintptr_t start, end, base;
    uint32_t module;
};
struct mh_range {
    uintptr_t start, end;
    bool anonymous_writable;  // rw- and no file (inode 0): a thread stack, a heap extent, a private mapping
};

static struct {
    struct mh_segment segments[MH_MAX_SEGMENTS];
    int segment_count;
    char paths[MH_MAX_SEGMENTS][256];
    uintptr_t bases[MH_MAX_SEGMENTS];
    int module_count;
    struct mh_range mappings[MH_MAX_MAPPINGS];  // readable, sorted by address (as /proc/self/maps lists them)
    int mapping_count;
    uintptr_t tls_below;  // how far below the thread pointer static TLS reaches
} layout;

static int collect_segments(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uintptr_t agent = (uintptr_t)data;
    bool is_agent = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        if (header->p_type == PT_LOAD && agent >= start && agent < start + header->p_memsz) is_agent = true;
    }
    if (is_agent || layout.module_count == MH_MAX_SEGMENTS) return 0;
    int module = layout.module_count++;
    layout.bases[module] = info->dlpi_addr;
    const char *path = info->dlpi_name != NULL && info->dlpi_name[0] ? info->dlpi_name : "";
    // The loader names the main executable with an empty path: its file, so that a capture read by another
    // process (a program's capture at exit) finds its symbols too. readlink allocates nothing.
    char executable[256];
    if (path[0] == 0) {
        ssize_t read = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
        if (read > 0) {
            executable[read] = 0;
            path = executable;
        }
    }
    size_t length = strnlen(path, 255);
    memcpy(layout.paths[module], path, length);
    layout.paths[module][length] = 0;
    uintptr_t tp = thread_pointer();
    if (info->dlpi_tls_data != NULL && (uintptr_t)info->dlpi_tls_data < tp && tp - (uintptr_t)info->dlpi_tls_data < ((uintptr_t)1 << 20)) {
        uintptr_t below = tp - (uintptr_t)info->dlpi_tls_data;
        if (below > layout.tls_below) layout.tls_below = below;
    }
    for (int i = 0; i < info->dlpi_phnum && layout.segment_count < MH_MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_W)) continue;
        uintptr_t start = (info->dlpi_addr + header->p_vaddr) & ~(uintptr_t)7;
        layout.segments[layout.segment_count++] =
            (struct mh_segment){start, info->dlpi_addr + header->p_vaddr + header->p_memsz, info->dlpi_addr, (uint32_t)module};
    }
    return 0;
}

static uintptr_t parse_hex(const char **cursor) {
    uintptr_t value = 0;
    for (const char *p = *cursor;; p++) {
        char c = *p;
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) {
            *cursor = p;
            return value;
        }
        value = value * 16 + (uintptr_t)digit;
    }
}

// The readable mappings of /proc/self/maps, read whole into a mapping (a few KiB to a few MiB). The capture's
// own mappings are left out: the text itself (unmapped before the scan) and the writer's buffer `excluded`.
static bool read_mappings(uintptr_t excluded) {
    size_t capacity = (size_t)8 << 20;
    char *text = mh_map(capacity);
    if (text == NULL) return false;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    size_t used = 0;
    if (fd >= 0) {
        for (ssize_t n; used < capacity - 1 && (n = read(fd, text + used, capacity - 1 - used)) != 0;) {
            if (n < 0) {
                if (errno == EINTR) continue;
                break;
            }
            used += (size_t)n;
        }
        close(fd);
    }
    text[used] = 0;
    layout.mapping_count = 0;
    for (const char *line = text; *line && layout.mapping_count < MH_MAX_MAPPINGS;) {
        const char *p = line;
        uintptr_t start = parse_hex(&p);
        if (*p == '-') p++;
        uintptr_t end = parse_hex(&p);
        bool own = (start <= (uintptr_t)text && (uintptr_t)text < end) || (start <= excluded && excluded < end);
        if (*p == ' ' && p[1] == 'r' && !own) {
            // "rw-p 00000000 00:00 0": writable, then offset, device and an inode of 0 (no file).
            bool writable = p[2] == 'w';
            const char *field = p + 6;
            for (int skip = 0; skip < 2 && *field; skip++) {
                while (*field && *field != ' ') field++;
                while (*field == ' ') field++;
            }
            bool no_file = field[0] == '0' && (field[1] == ' ' || field[1] == '\n' || field[1] == 0);
            layout.mappings[layout.mapping_count++] = (struct mh_range){start, end, writable && no_file};
        }
        const char *newline = strchr(line, '\n');
        if (newline == NULL) break;
        line = newline + 1;
    }
    munmap(text, capacity);
    return fd >= 0;
}

// The readable mapping holding `address`, or NULL.
static const struct mh_range *mapping_of(uintptr_t address) {
    int low = 0, high = layout.mapping_count - 1;
    while (low <= high) {
        int middle = (low + high) / 2;
        const struct mh_range *range = &layout.mappings[middle];
        if (address < range->start) {
            high = middle - 1;
        } else if (address >= range->end) {
            low = middle + 1;
        } else {
            return range;
        }
    }
    return NULL;
}

// ---- The sorted blocks and the scan ------------------------------------------------------------------------------------
struct mh_sorted {
    struct mh_block_slot *blocks;  // sorted by address
    uint64_t count;
    uintptr_t low, high;  // first start, last end
};

// The table's entries are sorted where they were copied, 16 bytes a block and no second buffer (a radix sort's
// spare copy doubled the capture's memory): an introsort (quicksort on the median of three that turns to heapsort
// past twice the expected depth) after one in-place radix pass. Addresses are unique (the table holds each live
// block once).
static inline void swap_slots(struct mh_block_slot *a, struct mh_block_slot *b) {
    struct mh_block_slot t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(struct mh_block_slot *blocks, size_t root, size_t count) {
    for (size_t child; (child = 2 * root + 1) < count; root = child) {
        if (child + 1 < count && blocks[child + 1].address > blocks[child].address) child++;
        if (blocks[root].address >= blocks[child].address) return;
        swap_slots(&blocks[root], &blocks[child]);
    }
}

static void heap_sort(struct mh_block_slot *blocks, size_t count) {
    for (size_t i = count / 2; i-- > 0;) sift_down(blocks, i, count);
    for (size_t end = count; end-- > 1;) {
        swap_slots(&blocks[0], &blocks[end]);
        sift_down(blocks, 0, end);
    }
}

static void intro_sort(struct mh_block_slot *blocks, size_t count, int depth) {
    while (count > 16) {
        if (depth-- == 0) {
            heap_sort(blocks, count);
            return;
        }
        // The median of the first, middle and last in the middle; Hoare's partition around it.
        size_t middle = count / 2, last = count - 1;
        if (blocks[middle].address < blocks[0].address) swap_slots(&blocks[middle], &blocks[0]);
        if (blocks[last].address < blocks[0].address) swap_slots(&blocks[last], &blocks[0]);
        if (blocks[last].address < blocks[middle].address) swap_slots(&blocks[last], &blocks[middle]);
        uintptr_t pivot = blocks[middle].address;
        size_t i = 0, j = last;
        for (;;) {
            while (blocks[i].address < pivot) i++;
            while (blocks[j].address > pivot) j--;
            if (i >= j) break;
            swap_slots(&blocks[i], &blocks[j]);
            i++;
            j--;
        }
        // [0, j] and [j + 1, count): the smaller one by recursion (a depth of log2(count) at most), the other here.
        size_t left = j + 1;
        if (left < count - left) {
            intro_sort(blocks, left, depth);
            blocks += left;
            count -= left;
        } else {
            intro_sort(blocks + left, count - left, depth);
            count = left;
        }
    }
    for (size_t i = 1; i < count; i++) {
        struct mh_block_slot next = blocks[i];
        size_t slot = i;
        for (; slot > 0 && blocks[slot - 1].address > next.address; slot--) blocks[slot] = blocks[slot - 1];
        blocks[slot] = next;
    }
}

// The radix pass (American flag sort: counted, then each entry moved into its bucket along the cycle it starts)
// is on the 16 highest bits in which the addresses differ; each bucket, a few dozen blocks, is then introsorted.
// It saves about 30 ms a million blocks against the introsort alone (0.16 s a capture against 0.10 s with the spare
// copy, which also kept the addresses apart, 8 bytes each, for the scan's binary searches). The buckets (1 MiB)
// are in the table copy's mapping, after the blocks: unmapped with it, nothing allocated with the world stopped.
#define MH_BUCKETS (1 << 16)
#define MH_BUCKET_BYTES ((size_t)(2 * MH_BUCKETS + 1) * sizeof(uint64_t))

static inline unsigned bucket_of(uintptr_t address, unsigned shift) { return (unsigned)((address >> shift) & 0xFFFF); }

static void sort_blocks(struct mh_sorted *sorted, uint64_t *buckets) {
    uint64_t *bucket_start = buckets, *bucket_next = buckets + MH_BUCKETS + 1;
    struct mh_block_slot *blocks = sorted->blocks;
    uint64_t count = sorted->count;
    uintptr_t all_or = 0, all_and = ~(uintptr_t)0;
    for (uint64_t i = 0; i < count; i++) {
        all_or |= blocks[i].address;
        all_and &= blocks[i].address;
    }
    uintptr_t differ = all_or ^ all_and;
    if (count < 2 || differ == 0) return;
    int highest = 63 - __builtin_clzll((unsigned long long)differ);
    unsigned shift = highest >= 15 ? (unsigned)(highest - 15) : 0;
    memset(bucket_start, 0, (MH_BUCKETS + 1) * sizeof(uint64_t));
    for (uint64_t i = 0; i < count; i++) bucket_start[bucket_of(blocks[i].address, shift) + 1]++;
    for (size_t d = 0; d < MH_BUCKETS; d++) {
        bucket_start[d + 1] += bucket_start[d];
        bucket_next[d] = bucket_start[d];
    }
    for (size_t d = 0; d < MH_BUCKETS; d++) {
        while (bucket_next[d] < bucket_start[d + 1]) {
            struct mh_block_slot moving = blocks[bucket_next[d]];
            for (unsigned home = bucket_of(moving.address, shift); home != d; home = bucket_of(moving.address, shift)) {
                swap_slots(&moving, &blocks[bucket_next[home]++]);
            }
            blocks[bucket_next[d]++] = moving;
        }
    }
    int depth = 0;
    for (uint64_t n = count; n > 1; n >>= 1) depth += 2;
    for (size_t d = 0; d < MH_BUCKETS; d++) {
        uint64_t size = bucket_start[d + 1] - bucket_start[d];
        if (size > 1) intro_sort(blocks + bucket_start[d], size, depth);
    }
}

#define MH_POINTER_MASK (~(uintptr_t)0xFF00000000000007ull)

// The index of the block holding `value` (its spare bits cleared), or -1.
static inline int64_t block_of(const struct mh_sorted *sorted, uintptr_t word) {
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
    return value < sorted->blocks[low].address + sorted->blocks[low].bytes ? (int64_t)low : -1;
}

// ---- Writing --------------------------------------------------------------------------------------------------------
struct mh_writer {
    int fd;
    char *buffer;
    size_t used, capacity;
    uint64_t written;
    bool failed;
};

static void flush(struct mh_writer *writer) {
    if (writer->used > 0 && !writer->failed && !mh_write_all(writer->fd, writer->buffer, writer->used)) writer->failed = true;
    writer->written += writer->used;
    writer->used = 0;
}

static void put(struct mh_writer *writer, const void *bytes, size_t length) {
    if (writer->used + length > writer->capacity) flush(writer);
    memcpy(writer->buffer + writer->used, bytes, length);
    writer->used += length;
}
static void put_u32(struct mh_writer *writer, uint32_t value) { put(writer, &value, 4); }
static void put_u64(struct mh_writer *writer, uint64_t value) { put(writer, &value, 8); }

// Section counts are not known until a section is written: the writer remembers where to patch them.
static uint64_t position(struct mh_writer *writer) { return writer->written + writer->used; }
static void patch_u64(struct mh_writer *writer, uint64_t at, uint64_t value) {
    flush(writer);
    if (!writer->failed && pwrite(writer->fd, &value, 8, (off_t)at) != 8) writer->failed = true;
}

enum { MH_ROOT_GLOBAL = 1, MH_ROOT_STACK = 2, MH_ROOT_REGISTER = 3, MH_ROOT_TLS = 4 };

struct mh_capture_counts {
    uint64_t edges, roots;
};

static void put_root(struct mh_writer *writer, uint32_t kind, uint32_t owner, uint64_t slot, int64_t target) {
    put_u32(writer, kind);
    put_u32(writer, owner);
    put_u64(writer, slot);
    put_u64(writer, (uint64_t)target);
}

static uint64_t scan_range_as_root(struct mh_writer *writer, const struct mh_sorted *sorted, uintptr_t start,
                                   uintptr_t end, uint32_t kind, uint32_t owner) {
    uint64_t roots = 0;
    for (uintptr_t slot = (start + 7) & ~(uintptr_t)7; slot + 8 <= end; slot += 8) {
        int64_t target = block_of(sorted, *(const uintptr_t *)slot);
        if (target >= 0) {
            put_root(writer, kind, owner, slot, target);
            roots++;
        }
    }
    return roots;
}

// Stacks, TLS and registers of one thread (index `owner` in the thread section).
static uint64_t scan_thread(struct mh_writer *writer, const struct mh_sorted *sorted, const struct mh_stopped *thread,
                            uint32_t owner) {
    uint64_t roots = 0;
    const struct mh_range *stack = mapping_of(thread->sp);
    if (stack != NULL) {
        // A stopped thread may have been in a leaf function using the 128 bytes below its stack pointer (the
        // x86-64 red zone); the capturing thread (owner 0) is scanned from its caller's frame, where it called.
        uintptr_t red_zone = owner == 0 ? 0 : 128;
        uintptr_t from = thread->sp - red_zone >= stack->start ? thread->sp - red_zone : stack->start;
        roots += scan_range_as_root(writer, sorted, from, stack->end, MH_ROOT_STACK, owner);
    }
    const struct mh_range *tls = mapping_of(thread->tp);
    if (tls != NULL && !(stack != NULL && tls == stack)) {
        uintptr_t from = thread->tp - layout.tls_below >= tls->start ? thread->tp - layout.tls_below : tls->start;
        uintptr_t to = thread->tp + 4096 <= tls->end ? thread->tp + 4096 : tls->end;
        roots += scan_range_as_root(writer, sorted, from, to, MH_ROOT_TLS, owner);
    }
    for (uint32_t i = 0; i < MH_REGISTERS; i++) {
        int64_t target = block_of(sorted, thread->registers[i]);
        if (target >= 0) {
            put_root(writer, MH_ROOT_REGISTER, owner, i, target);
            roots++;
        }
    }
    return roots;
}

// ---- The capture -------------------------------------------------------------------------------------------------
static char capture_failure[256];

static int fail(const char *reason, int code) {
    size_t length = strlen(reason);
    if (length > sizeof(capture_failure) - 1) length = sizeof(capture_failure) - 1;
    memcpy(capture_failure, reason, length);
    capture_failure[length] = 0;
    return code;
}

const char *memharness_agent_heap_failure(void) { return capture_failure; }
int memharness_agent_heap_enabled(void) { return heap_ready && (atomic_load_explicit(&mh_state, memory_order_relaxed) & MH_BLOCKS) != 0; }
int64_t memharness_agent_heap_blocks(void) { return memharness_agent_heap_enabled() ? mh_heap_block_count() : -1; }

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
    put_u32(writer, (uint32_t)thread->tid);
    put_u32(writer, state);
    put_u64(writer, thread->sp);
    put_u64(writer, thread->pc);
    put_u64(writer, thread->tp);
    char name[16];
    thread_name(thread->tid, name);
    put(writer, name, 16);
    // The chain of frame pointers, to tell which function's frame holds a stack root.
    uintptr_t frames[2 * 128];
    uint32_t depth = 0;
    const struct mh_range *stack = mapping_of(thread->sp);
    for (uintptr_t fp = thread->fp; stack != NULL && depth < 128;) {
        if ((fp & 7) != 0 || fp < thread->sp || fp + 16 > stack->end) break;
        frames[2 * depth] = fp;
        frames[2 * depth + 1] = ((const uintptr_t *)fp)[1];
        depth++;
        uintptr_t caller = ((const uintptr_t *)fp)[0];
        if (caller <= fp) break;
        fp = caller;
    }
    put_u32(writer, depth);
    put_u32(writer, 0);
    put(writer, frames, sizeof(uintptr_t) * 2 * depth);
}

static void put_header(struct mh_writer *writer, const char *label, struct mh_world *world) {
    put(writer, "MHHEAP01", 8);
    put_u32(writer, 1);
    put_u32(writer, world->unstopped > 0 ? 1u : 0u);  // flags: 1 approximate (a thread ran on)
    put_u64(writer, (uint64_t)mh_relative_ns());
    put_u32(writer, (uint32_t)world->signalled_count);
    put_u32(writer, (uint32_t)world->unstopped);
    char text[64] = {0};
    size_t length = label != NULL ? strnlen(label, 63) : 0;
    if (length > 0) memcpy(text, label, length);
    put(writer, text, 64);
}

static void put_layout(struct mh_writer *writer) {
    put_u64(writer, (uint64_t)layout.module_count);
    for (int i = 0; i < layout.module_count; i++) {
        put_u64(writer, layout.bases[i]);
        uint32_t length = (uint32_t)strlen(layout.paths[i]);
        put_u32(writer, length);
        put(writer, layout.paths[i], length);
    }
    put_u64(writer, (uint64_t)layout.segment_count);
    for (int i = 0; i < layout.segment_count; i++) {
        put_u64(writer, layout.segments[i].start);
        put_u64(writer, layout.segments[i].end);
        put_u64(writer, layout.segments[i].module);
    }
}

static uint64_t stack_seen[(1u << 16) / 64];

static void put_blocks(struct mh_writer *writer, const struct mh_sorted *sorted) {
    memset(stack_seen, 0, sizeof(stack_seen));
    put_u64(writer, sorted->count);
    for (uint64_t i = 0; i < sorted->count; i++) {
        const struct mh_block_slot *block = &sorted->blocks[i];
        const uintptr_t *words = (const uintptr_t *)block->address;
        uint32_t stack = mh_sampled_stack_locked(block->address);
        if (stack != 0 && stack < (1u << 16)) stack_seen[stack / 64] |= (uint64_t)1 << (stack % 64);
        put_u64(writer, block->address);
        put_u64(writer, block->bytes);
        put_u64(writer, words[0]);
        put_u64(writer, block->bytes >= 16 ? words[1] : 0);
        put_u64(writer, stack);
    }
}

static void put_edges(struct mh_writer *writer, const struct mh_sorted *sorted) {
    uint64_t at = position(writer), edges = 0;
    put_u64(writer, 0);
    for (uint64_t i = 0; i < sorted->count; i++) {
        const uintptr_t *words = (const uintptr_t *)sorted->blocks[i].address;
        uint64_t count = sorted->blocks[i].bytes / 8;
        for (uint64_t w = 0; w < count; w++) {
            int64_t target = block_of(sorted, words[w]);
            if (target < 0) continue;
            put_u32(writer, (uint32_t)i);
            put_u32(writer, (uint32_t)target);
            put_u64(writer, w * 8);
            edges++;
        }
    }
    patch_u64(writer, at, edges);
}

static void put_stacks(struct mh_writer *writer) {
    uint64_t at = position(writer), count = 0;
    put_u64(writer, 0);
    for (uint32_t id = 1; id < (1u << 16); id++) {
        if (!(stack_seen[id / 64] & ((uint64_t)1 << (id % 64)))) continue;
        const uintptr_t *frames = NULL;
        int depth = mh_stack_frames(id, &frames);
        put_u32(writer, id);
        put_u32(writer, (uint32_t)depth);
        put(writer, frames, sizeof(uintptr_t) * (size_t)depth);
        count++;
    }
    patch_u64(writer, at, count);
}

// Copies the table into `sorted` (one mapping sized for it, 16 bytes a block, and the sort's buckets) and sorts it
// there; false when no mapping could be had. The mapping is `sorted->blocks`, of `*region_bytes`.
static bool snapshot_table(struct mh_sorted *sorted, size_t *region_bytes) {
    uint64_t count = 0;
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) count += heap_shards[i].count;
    size_t block_bytes = (size_t)(count + 1) * sizeof(struct mh_block_slot);
    *region_bytes = block_bytes + MH_BUCKET_BYTES;
    sorted->blocks = mh_map(*region_bytes);
    if (sorted->blocks == NULL) return false;
    sorted->count = 0;
    for (size_t i = 0; i < MH_HEAP_SHARDS; i++) {
        size_t capacity = (size_t)1 << heap_shards[i].capacity_log2;
        for (size_t s = 0; s < capacity; s++) {
            if (heap_shards[i].slots[s].address != 0) sorted->blocks[sorted->count++] = heap_shards[i].slots[s];
        }
    }
    sort_blocks(sorted, (uint64_t *)((char *)sorted->blocks + block_bytes));
    const struct mh_block_slot *last = &sorted->blocks[sorted->count > 0 ? sorted->count - 1 : 0];
    sorted->low = sorted->count > 0 ? sorted->blocks[0].address : 0;
    sorted->high = sorted->count > 0 ? last->address + last->bytes : 0;
    return true;
}

// glibc keeps the stacks of ended threads for reuse, with their thread control block at the top, and the control
// block keeps the thread's dynamic thread vector (`dtv`, a malloc'd block, with the TLS blocks of dlopen'd modules
// hanging from it) for the next thread: live memory the C library owns. A control block is recognised by its two
// self-pointers (tcbhead_t's `tcb` at 0 and `self` at 16, x86-64); only its `dtv` word (at 8) is a root, of kind
// TLS with the owner UINT32_MAX (no live thread): the rest of an ended thread's TLS is stale and keeps nothing.
static uint64_t scan_cached_thread_blocks(struct mh_writer *writer, const struct mh_sorted *sorted) {
    uint64_t roots = 0;
#if defined(__x86_64__)
    for (int i = 0; i < layout.mapping_count; i++) {
        const struct mh_range *range = &layout.mappings[i];
        if (!range->anonymous_writable || range->end - range->start < 16384) continue;
        for (uintptr_t at = range->end - 16384; at + 24 <= range->end; at += 8) {
            const uintptr_t *words = (const uintptr_t *)at;
            if (words[0] != at || words[2] != at) continue;
            roots += scan_range_as_root(writer, sorted, at + 8, at + 16, MH_ROOT_TLS, UINT32_MAX);
            break;
        }
    }
#else
    (void)writer;
    (void)sorted;
#endif
    return roots;
}

static void put_threads_and_roots(struct mh_writer *writer, const struct mh_sorted *sorted, const struct mh_stopped *self) {
    uint32_t stopped = atomic_load_explicit(&stop.slots_taken, memory_order_acquire);
    if (stopped > MH_MAX_THREADS) stopped = MH_MAX_THREADS;
    put_u64(writer, (uint64_t)stopped + 1);
    put_thread(writer, self, 2);  // 2: the capturing thread itself
    for (uint32_t i = 0; i < stopped; i++) put_thread(writer, &stop.threads[i], 1);
    uint64_t at = position(writer), roots = 0;
    put_u64(writer, 0);
    for (int i = 0; i < layout.segment_count; i++) {
        roots += scan_range_as_root(writer, sorted, layout.segments[i].start, layout.segments[i].end, MH_ROOT_GLOBAL,
                                    layout.segments[i].module);
    }
    roots += scan_thread(writer, sorted, self, 0);
    for (uint32_t i = 0; i < stopped; i++) roots += scan_thread(writer, sorted, &stop.threads[i], i + 1);
    roots += scan_cached_thread_blocks(writer, sorted);
    patch_u64(writer, at, roots);
}

// Everything between the stop and the resume; returns the writer's state. `self` is the capturing thread as its
// caller left it: the caller's callee-saved registers and its stack from the caller's frame up (the agent's own
// frames below hold nothing of the program's, but may hold stale words of calls that returned).
__attribute__((noinline)) static bool capture_stopped(struct mh_writer *writer, const char *label, struct mh_world *world,
                                                      const struct mh_stopped *self) {
    struct mh_sorted sorted = {0};
    size_t region_bytes = 0;
    bool mapped = snapshot_table(&sorted, &region_bytes);
    if (mapped) {
        put_header(writer, label, world);
        put_layout(writer);
        put_threads_and_roots(writer, &sorted, self);
        put_blocks(writer, &sorted);
        put_edges(writer, &sorted);
        put_stacks(writer);
        flush(writer);
    }
    if (sorted.blocks != NULL) munmap(sorted.blocks, region_bytes);
    return mapped && !writer->failed;
}

// The calling thread's callee-saved registers at entry (the only registers a caller can keep a pointer in across
// the call), and its caller's frame.
#define MH_CALLER_STATE(self)                                                                                           \
    do {                                                                                                                \
        (self)->tid = (int32_t)syscall(SYS_gettid);                                                                     \
        (self)->tp = thread_pointer();                                                                                  \
        (self)->fp = *(const uintptr_t *)__builtin_frame_address(0);                                                    \
        (self)->sp = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(uintptr_t);                                     \
        (self)->pc = (uintptr_t)__builtin_return_address(0);                                                            \
        MH_CALLEE_SAVED((self)->registers);                                                                             \
    } while (0)
#if defined(__x86_64__)
// Stored where the signal context keeps them (gregs: REG_RBX 11, REG_RBP 10, REG_R12...R15 4...7).
#define MH_CALLEE_SAVED(r)                                                                                              \
    __asm__ volatile("mov %%rbx, %0\n\tmov %%r12, %1\n\tmov %%r13, %2\n\tmov %%r14, %3\n\tmov %%r15, %4"                  \
                     : "=m"((r)[REG_RBX]), "=m"((r)[REG_R12]), "=m"((r)[REG_R13]), "=m"((r)[REG_R14]), "=m"((r)[REG_R15]))
#elif defined(__aarch64__)
#define MH_CALLEE_SAVED(r)                                                                                              \
    __asm__ volatile("stp x19, x20, [%0, #152]\n\tstp x21, x22, [%0, #168]\n\tstp x23, x24, [%0, #184]\n\t"            \
                     "stp x25, x26, [%0, #200]\n\tstp x27, x28, [%0, #216]"                                             \
                     : : "r"(r) : "memory")
#else
#define MH_CALLEE_SAVED(r) ((void)(r))
#endif

int memharness_agent_capture_heap(const char *path, const char *label) {
    if (!memharness_agent_heap_enabled()) return fail("the agent does not track blocks (MEMHARNESS_AGENT_HEAP=1)", ENOTSUP);
    if (path == NULL || strlen(path) > MH_PATH_CAPACITY - 8) return fail("no path, or a path too long", EINVAL);
    if (!mh_try_lock(&capture_lock)) return fail("another capture is under way", EBUSY);
    static struct mh_stopped self;
    memset(&self, 0, sizeof(self));
    MH_CALLER_STATE(&self);
    struct mh_thread *thread = &mh_tls;
    thread->guard++;
    int code = 0;
    const char *problem = install_handler();
    char temporary[MH_PATH_CAPACITY];
    char *end = mh_put_str(temporary, path);
    mh_put_str(end, ".tmp");
    end[4] = 0;
    static struct mh_writer writer;
    writer = (struct mh_writer){.fd = -1, .capacity = (size_t)1 << 20};
    writer.buffer = mh_map(writer.capacity);
    if (problem != NULL) {
        code = fail(problem, EBUSY);
    } else if (writer.buffer == NULL) {
        code = fail("cannot map the capture's buffer", ENOMEM);
    } else if ((writer.fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
        code = fail("cannot create the capture file", errno);
    } else {
        // Read before the world stops: dl_iterate_phdr takes the loader's lock, which a stopped thread may hold.
        layout.module_count = layout.segment_count = 0;
        layout.tls_below = 0;
        dl_iterate_phdr(collect_segments, (void *)(uintptr_t)&memharness_agent_capture_heap);
        static struct mh_world world;
        mh_stacks_fork_prepare();
        mh_marks_fork_prepare();
        heap_lock_all();
        atomic_store_explicit(&stop.arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&stop.left, 0, memory_order_relaxed);
        atomic_store_explicit(&stop.slots_taken, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&stop.generation, 1, memory_order_release);  // odd: capturing
        stop_world(&world);
        // The mappings are read with the world stopped: a thread that unmapped or protected memory between a
        // reading and the scan would make the scan fault.
        bool mapped = read_mappings((uintptr_t)writer.buffer);
        bool written = mapped && capture_stopped(&writer, label, &world, &self);
        resume_world(&world);
        heap_unlock_all();
        mh_marks_fork_parent();
        mh_stacks_fork_parent();
        if (!mapped) {
            code = fail("cannot read /proc/self/maps", EIO);
        } else if (!written) {
            code = fail("cannot write the capture file (disk full?) or map its buffers", EIO);
        }
    }
    if (writer.fd >= 0) {
        if (close(writer.fd) != 0 && code == 0) code = fail("cannot close the capture file", errno);
        if (code == 0 && rename(temporary, path) != 0) code = fail("cannot rename the capture file into place", errno);
        if (code != 0) unlink(temporary);
    }
    if (writer.buffer != NULL) munmap(writer.buffer, writer.capacity);
    if (code == 0) capture_failure[0] = 0;
    thread->guard--;
    mh_release_lock(&capture_lock);
    return code;
}

// ---- The stop signal stays deliverable -------------------------------------------------------------------------
// Threads that block every signal (libdispatch's workers do, so does a process started with a mask that blocks
// it) could not be stopped. While the heap is tracked, the agent's pthread_sigmask and sigprocmask take the stop
// signal out of any set they are asked to block, as the Boehm collector's wrappers do; the thread that starts the
// process gets it unblocked at start-up. Without heap tracking both forward unchanged.
typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
static _Atomic(mask_fn) next_pthread_sigmask;
static _Atomic(mask_fn) next_sigprocmask;

static int raw_sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    return (int)syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8));
}

static const sigset_t *without_stop_signal(int how, const sigset_t *set, sigset_t *copy) {
    if (set == NULL || how == SIG_UNBLOCK || !heap_ready || !sigismember(set, MH_STOP_SIGNAL)) return set;
    *copy = *set;
    sigdelset(copy, MH_STOP_SIGNAL);
    return copy;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
    sigset_t copy;
    set = without_stop_signal(how, set, &copy);
    mask_fn next = atomic_load_explicit(&next_pthread_sigmask, memory_order_acquire);
    if (next != NULL) return next(how, set, old);
    return raw_sigprocmask(how, set, old) == 0 ? 0 : errno;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    sigset_t copy;
    set = without_stop_signal(how, set, &copy);
    mask_fn next = atomic_load_explicit(&next_sigprocmask, memory_order_acquire);
    return next != NULL ? next(how, set, old) : raw_sigprocmask(how, set, old);
}

void mh_heap_start(void) {
    atomic_store_explicit(&next_pthread_sigmask, (mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask"), memory_order_release);
    atomic_store_explicit(&next_sigprocmask, (mask_fn)dlsym(RTLD_NEXT, "sigprocmask"), memory_order_release);
    if (!heap_ready) return;
    sigset_t stop_only;
    sigemptyset(&stop_only);
    sigaddset(&stop_only, MH_STOP_SIGNAL);
    raw_sigprocmask(SIG_UNBLOCK, &stop_only, NULL);
}
