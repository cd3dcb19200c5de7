// Allocation stacks: how they are unwound, the stack depot (one id per distinct stack, for sampled blocks and for
// every block of the heap table alike), sampling by bytes, and the table of sampled blocks still alive.
//
// Sampling (as tcmalloc's sampler): each thread counts down the bytes it requests; when the count
// crosses zero the allocation that crossed it is sampled and a new count is drawn from an exponential
// distribution of mean N (MEMHARNESS_AGENT_STACK_SAMPLE_BYTES). A request of s bytes is then sampled with
// probability p = 1 - exp(-s/N) whatever happened before it, so its block stands for u/p bytes (u: its
// usable, size-class bytes, asked of jemalloc only for sampled blocks) and 1/p blocks: those are the
// weights added to its stack while it lives. Big blocks are always seen (p ~ 1).
//
// Unwinding: a frame-pointer walk from the interposer's own frame. Each step is checked (aligned, moving
// up the stack, by less than 8 MiB, inside the thread's stack when its bounds are known) so that a broken
// chain (a frame without a frame pointer that reused the register) ends the walk instead of a fault.
//
// Storage: everything is mmap'd once at start-up with MAP_NORESERVE (never the allocator it interposes); pages are
// touched as they are used.
// - the depot, hash-consed as compiler-rt's sanitizer_stackdepot is: an append-only array (id -> frames, live
//   weights), a pool of frames, and an open-addressing index (hash -> id) read without a lock; a new stack is added
//   under one lock (once per distinct stack). With the heap tracked every allocation is walked and looked up (a
//   thread's last stack is checked first: a loop allocates from one site); 4 Mi stacks and 32 Mi frames at most,
//   then id 0 (no stack).
// - sampled blocks: 64 shards, each with a lock, chained buckets and its own pool of nodes; in front of
//   them a counting filter (one byte per pointer-hash bucket, saturating at 255, read without a lock)
//   that is zero for almost every free, so a free of an unsampled block costs one load.
#include "agent_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_stack_end;

__thread struct mh_thread mh_tls __attribute__((tls_model("initial-exec"))) MH_HIDDEN;

#define MH_FRAME_POOL (1u << 25)       // frames of all stacks together: 8 per stack on average
#define MH_STACK_SLOTS (2 * MH_MAX_STACKS)  // index at most half full: short probes
#define MH_NODES (1u << 20)            // sampled blocks alive at once, all shards together
#define MH_SHARDS (1u << MH_SHARD_BITS)
#define MH_NODES_PER_SHARD (MH_NODES / MH_SHARDS)
#define MH_MAX_STEP ((uintptr_t)8 << 20)    // one frame's size; bigger means a broken chain
#define MH_UNKNOWN_SPAN ((uintptr_t)64 << 10)  // how far up a walk may go on a stack of unknown bounds
#define MH_MAX_LEADING 16               // agent frames skipped before the caller's at most

struct mh_stack *mh_stacks;
uintptr_t *mh_frame_pool;
_Atomic uint32_t mh_stack_count;
_Atomic uint8_t *mh_filter;
_Atomic int64_t mh_samples_taken;
_Atomic int64_t mh_samples_dropped;
uintptr_t mh_text_lo, mh_text_hi;

static _Atomic uint64_t *stack_index;
static uint32_t frames_used;  // under stack_lock
static mh_lock stack_lock;
static pthread_t main_thread;

struct mh_node {
    uintptr_t block;
    int64_t bytes;
    int64_t count_fx;
    uint32_t stack;
    uint32_t next;  // node index + 1; 0 ends the chain
};

struct mh_shard {
    mh_lock lock;
    uint32_t free_head;  // node index + 1
    uint32_t bump;       // nodes of this shard handed out so far
} __attribute__((aligned(64)));

static struct mh_shard shards[MH_SHARDS];
static uint32_t *buckets;  // node index + 1; under the shard's lock
static struct mh_node *nodes;

// The depot and the sampled blocks' tables (mappings, idempotent): made at the first call into the agent when the heap
// is tracked, so that the blocks the C library, libstdc++ and the Swift runtime allocate before the agent's
// constructor runs (libstdc++'s emergency exception pool, 72 KiB) have an allocation stack too.
bool mh_stacks_create(void) {
    if (mh_stacks != NULL) return true;
    mh_stacks = mh_map(sizeof(struct mh_stack) * MH_MAX_STACKS);
    mh_frame_pool = mh_map(sizeof(uintptr_t) * MH_FRAME_POOL);
    stack_index = mh_map(sizeof(uint64_t) * MH_STACK_SLOTS);
    mh_filter = mh_map((size_t)1 << MH_FILTER_BITS);
    buckets = mh_map(sizeof(uint32_t) << MH_BUCKET_BITS);
    nodes = mh_map(sizeof(struct mh_node) * MH_NODES);
    if (!mh_stacks || !mh_frame_pool || !stack_index || !mh_filter || !buckets || !nodes) {
        mh_stacks = NULL;
        return false;
    }
    atomic_store_explicit(&mh_stack_count, 1, memory_order_release);  // id 0: no stack (or the depot was full)
    return true;
}

bool mh_stacks_init(void) {
    bool sampling = mh_config.stack_sample_bytes > 0;
    if (!sampling && !mh_config.heap) return true;
    if (!mh_stacks_create()) return false;
    main_thread = pthread_self();
    if (sampling) atomic_fetch_or_explicit(&mh_state, MH_STACKS, memory_order_release);
    return true;
}

// ---- The agent's own code, skipped at the start of a walk ---------------------------------------------
static int find_text(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uintptr_t address = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_X)) continue;
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        if (address >= start && address < start + header->p_memsz) {
            mh_text_lo = start;
            mh_text_hi = start + header->p_memsz;
            return 1;
        }
    }
    return 0;
}

void mh_find_agent_text(void) { dl_iterate_phdr(find_text, (void *)(uintptr_t)&mh_find_agent_text); }

// ---- Unwinding ---------------------------------------------------------------------------------------
void mh_thread_bounds(struct mh_thread *thread) {
    if (thread->bounds_known) return;
    thread->bounds_known = 1;
    thread->stack_hi = 0;
    // Before the constructor knows the main thread, only the main thread runs (start-up): the pid is its thread id.
    bool main = main_thread != 0 ? pthread_equal(pthread_self(), main_thread) : mh_thread_id() == getpid();
    if (main) {
        // The main thread's frames all lie below the stack pointer the process started with.
        thread->stack_hi = (uintptr_t)__libc_stack_end;
        return;
    }
    // Any other thread: its thread pointer. glibc puts a thread's control block and static TLS at the top of its stack
    // block (its own or the one pthread_attr_setstack gave), and the frames below them: every frame lies under the
    // thread pointer, and the memory between the stack pointer and it is the thread's. Not pthread_getattr_np: it
    // holds the thread's own lock while it allocates (its cpuset), so the allocation that brought the agent here may
    // come from it (the JVM's threads call it before anything else) and would wait for that lock for ever.
    uintptr_t top = mh_thread_pointer();
    if (top > (uintptr_t)__builtin_frame_address(0)) thread->stack_hi = top;
}

int mh_walk(void *frame, uintptr_t *frames, int capacity, bool *truncated) {
    uintptr_t fp = (uintptr_t)frame;
    uintptr_t high = mh_tls.stack_hi;
    // A frame outside the known stack (a signal stack, a thread of unknown bounds): stay close to it.
    if (high == 0 || fp >= high || high - fp > ((uintptr_t)1 << 32)) high = fp + MH_UNKNOWN_SPAN;
    int depth = 0, leading = 0;
    *truncated = false;
    for (;;) {
        if ((fp & (sizeof(uintptr_t) - 1)) != 0 || fp + 2 * sizeof(uintptr_t) > high) break;
        const uintptr_t *record = (const uintptr_t *)fp;
        uintptr_t caller_fp = record[0];
        uintptr_t return_address = record[1];
        if (return_address < 4096) break;  // 0 ends the chain at thread start (clone and _start clear it)
        if (depth == 0 && leading < MH_MAX_LEADING && return_address >= mh_text_lo && return_address < mh_text_hi) {
            leading++;
        } else {
            if (depth == capacity) {
                *truncated = true;
                break;
            }
            frames[depth++] = return_address;
        }
        if (caller_fp <= fp || caller_fp - fp > MH_MAX_STEP) break;
        fp = caller_fp;
    }
    return depth;
}

void memharness_agent_harness_begin(void) {
    mh_tls.guard++;
    mh_tls.harness++;
}
void memharness_agent_harness_end(void) {
    if (mh_tls.guard > 0) mh_tls.guard--;
    if (mh_tls.harness > 0) mh_tls.harness--;
}

int memharness_agent_capture_stack(uintptr_t *frames, int capacity) {
    if (frames == NULL || capacity <= 0) return 0;
    // At most 256 frames: the walk is bounded like every other walk of the agent's.
    if (capacity > 256) capacity = 256;
    mh_thread_bounds(&mh_tls);
    bool truncated;
    return mh_walk(__builtin_frame_address(0), frames, capacity, &truncated);
}

// ---- The stack table ---------------------------------------------------------------------------------
static uint64_t hash_frames(const uintptr_t *frames, int depth, bool truncated) {
    uint64_t hash = 0x84222325CBF29CE4ull ^ (uint64_t)depth ^ ((uint64_t)truncated << 8);
    for (int i = 0; i < depth; i++) {
        hash ^= frames[i];
        hash *= 0x100000001B3ull;
        hash ^= hash >> 29;
    }
    hash ^= hash >> 33;
    hash *= 0xFF51AFD7ED558CCDull;
    hash ^= hash >> 33;
    return hash;
}

static bool same_stack(uint32_t id, uint64_t hash, const uintptr_t *frames, int depth, bool truncated) {
    const struct mh_stack *stack = &mh_stacks[id];
    return stack->hash == hash && stack->depth == depth && stack->truncated == truncated &&
           memcmp(&mh_frame_pool[stack->first_frame], frames, (size_t)depth * sizeof(uintptr_t)) == 0;
}

// The slot holding the stack, or the empty slot where it would go (SIZE_MAX: the index is full).
static size_t probe(uint64_t hash, const uintptr_t *frames, int depth, bool truncated, uint32_t *found) {
    uint32_t tag = (uint32_t)(hash >> 32);
    size_t mask = MH_STACK_SLOTS - 1;
    for (size_t i = hash & mask, probes = 0; probes < MH_STACK_SLOTS; i = (i + 1) & mask, probes++) {
        uint64_t slot = atomic_load_explicit(&stack_index[i], memory_order_acquire);
        if (slot == 0) {
            *found = 0;
            return i;
        }
        uint32_t id = (uint32_t)slot;
        if ((uint32_t)(slot >> 32) == tag && same_stack(id, hash, frames, depth, truncated)) {
            *found = id;
            return i;
        }
    }
    *found = 0;
    return SIZE_MAX;
}

static uint32_t intern(const uintptr_t *frames, int depth, bool truncated, uint64_t hash) {
    uint32_t id;
    probe(hash, frames, depth, truncated, &id);
    if (id != 0) return id;
    mh_lock_take(&stack_lock);
    size_t slot = probe(hash, frames, depth, truncated, &id);
    if (id == 0 && slot != SIZE_MAX) {
        uint32_t count = atomic_load_explicit(&mh_stack_count, memory_order_relaxed);
        if (count < MH_MAX_STACKS && frames_used + (uint32_t)depth <= MH_FRAME_POOL) {
            id = count;
            struct mh_stack *stack = &mh_stacks[id];
            stack->hash = hash;
            stack->first_frame = frames_used;
            stack->depth = (uint16_t)depth;
            stack->truncated = truncated;
            memcpy(&mh_frame_pool[frames_used], frames, (size_t)depth * sizeof(uintptr_t));
            frames_used += (uint32_t)depth;
            // Published complete: readers that find the slot see the frames; snapshots see the count.
            atomic_store_explicit(&stack_index[slot], ((uint64_t)(uint32_t)(hash >> 32) << 32) | id, memory_order_release);
            atomic_store_explicit(&mh_stack_count, count + 1, memory_order_release);
        }
    }
    mh_lock_release(&stack_lock);
    return id;  // 0 when the table is full: such samples are kept under stack 0, which has no frames
}

// The depot id of the stack that allocates now, walked from `frame`; the caller holds the guard.
static uint32_t stack_of(struct mh_thread *thread, void *frame) {
    mh_thread_bounds(thread);
    uintptr_t frames[MH_MAX_FRAMES];
    bool truncated;
    int depth = mh_walk(frame, frames, MH_MAX_FRAMES, &truncated);
    uint64_t hash = hash_frames(frames, depth, truncated);
    // The thread's last stack again (a loop allocating at one site): its 64-bit hash and depth are enough to tell.
    if (hash == thread->last_hash && thread->last_stack != 0 && mh_stacks[thread->last_stack].depth == depth) {
        return thread->last_stack;
    }
    uint32_t id = intern(frames, depth, truncated, hash);
    thread->last_hash = hash;
    thread->last_stack = id;
    return id;
}

uint32_t mh_allocation_stack(void *frame) {
    struct mh_thread *thread = &mh_tls;
    // The harness's own blocks are marked as such; allocations made inside the agent have no stack.
    if (thread->harness) return MH_STACK_HARNESS;
    if (frame == NULL || mh_stacks == NULL || thread->guard) return 0;
    thread->guard = 1;
    uint32_t id = stack_of(thread, frame);
    thread->guard = 0;
    return id;
}

// ---- Sampled blocks ------------------------------------------------------------------------------------
static inline size_t filter_index(uint64_t hash) { return (size_t)(hash >> (64 - MH_FILTER_BITS)); }
static inline size_t bucket_index(uint64_t hash) { return (size_t)(hash >> (64 - MH_BUCKET_BITS)); }
static inline struct mh_shard *shard_of(uint64_t hash) { return &shards[hash >> (64 - MH_SHARD_BITS)]; }

static bool insert_block(void *block, uint32_t stack, int64_t bytes, int64_t count_fx) {
    uint64_t hash = mh_pointer_hash(block);
    struct mh_shard *shard = shard_of(hash);
    size_t shard_number = (size_t)(shard - shards);
    mh_lock_take(&shard->lock);
    uint32_t node;
    if (shard->free_head != 0) {
        node = shard->free_head - 1;
        shard->free_head = nodes[node].next;
    } else if (shard->bump < MH_NODES_PER_SHARD) {
        node = (uint32_t)(shard_number * MH_NODES_PER_SHARD) + shard->bump++;
    } else {
        mh_lock_release(&shard->lock);
        return false;
    }
    size_t bucket = bucket_index(hash);
    nodes[node] = (struct mh_node){.block = (uintptr_t)block, .bytes = bytes, .count_fx = count_fx, .stack = stack, .next = buckets[bucket]};
    buckets[bucket] = node + 1;
    _Atomic uint8_t *counter = &mh_filter[filter_index(hash)];
    uint8_t value = atomic_load_explicit(counter, memory_order_relaxed);
    // A counter that reached 255 stays there: it can only make frees look, never miss a sampled block.
    if (value != 255) atomic_store_explicit(counter, (uint8_t)(value + 1), memory_order_relaxed);
    mh_lock_release(&shard->lock);
    return true;
}

static bool take_block(void *block, uint64_t hash, struct mh_sampled *out) {
    struct mh_shard *shard = shard_of(hash);
    mh_lock_take(&shard->lock);
    size_t bucket = bucket_index(hash);
    uint32_t *link = &buckets[bucket];
    bool found = false;
    // Chains are short (live sampled blocks / 65,536 buckets) and finite: every node is in one chain.
    while (*link != 0) {
        struct mh_node *node = &nodes[*link - 1];
        if (node->block == (uintptr_t)block) {
            uint32_t index = *link - 1;
            *out = (struct mh_sampled){.stack = node->stack, .bytes = node->bytes, .count_fx = node->count_fx};
            *link = node->next;
            node->next = shard->free_head;
            shard->free_head = index + 1;
            _Atomic uint8_t *counter = &mh_filter[filter_index(hash)];
            uint8_t value = atomic_load_explicit(counter, memory_order_relaxed);
            if (value != 255) atomic_store_explicit(counter, (uint8_t)(value - 1), memory_order_relaxed);
            found = true;
            break;
        }
        link = &node->next;
    }
    mh_lock_release(&shard->lock);
    return found;
}

static void add_to_stack(const struct mh_sampled *sampled, int sign) {
    struct mh_stack *stack = &mh_stacks[sampled->stack];
    atomic_fetch_add_explicit(&stack->live_bytes, sign * sampled->bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&stack->live_count_fx, sign * sampled->count_fx, memory_order_relaxed);
}

int64_t mh_sampled_live_bytes(void) {
    if (mh_stacks == NULL) return 0;
    int64_t total = 0;
    uint32_t count = atomic_load_explicit(&mh_stack_count, memory_order_acquire);
    for (uint32_t id = 0; id < count; id++) total += atomic_load_explicit(&mh_stacks[id].live_bytes, memory_order_relaxed);
    return total;
}

void mh_forget_slow(void *block, uint64_t hash) {
    struct mh_sampled sampled;
    if (take_block(block, hash, &sampled)) add_to_stack(&sampled, -1);
}

bool mh_sampled_take(void *block, struct mh_sampled *out) {
    uint64_t hash = mh_pointer_hash(block);
    if (atomic_load_explicit(&mh_filter[filter_index(hash)], memory_order_relaxed) == 0) return false;
    if (!take_block(block, hash, out)) return false;
    add_to_stack(out, -1);
    return true;
}

void mh_sampled_restore(void *block, const struct mh_sampled *sampled) {
    if (insert_block(block, sampled->stack, sampled->bytes, sampled->count_fx)) {
        add_to_stack(sampled, 1);
    } else {
        atomic_fetch_add_explicit(&mh_samples_dropped, 1, memory_order_relaxed);
    }
}

// ---- Sampling ---------------------------------------------------------------------------------------------
static uint64_t next_random(struct mh_thread *thread) {
    // xorshift64*: a fast generator per thread; quality is ample for drawing sample distances.
    uint64_t x = thread->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    thread->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static int64_t draw_countdown(struct mh_thread *thread) {
    // u in (0, 1]: -log(u) is finite, at most 36.7 (53-bit u), so the distance stays below 37 N.
    double u = (double)((next_random(thread) >> 11) + 1) * 0x1.0p-53;
    double distance = -log(u) * (double)mh_config.stack_sample_bytes;
    // At least one byte: a zero distance would sample the next allocation whatever its size.
    return distance < 1 ? 1 : (int64_t)distance;
}

static void seed(struct mh_thread *thread) {
    static _Atomic uint64_t sequence;
    // splitmix64 of the thread's TLS address, the time and a sequence number: distinct per thread and run.
    uint64_t z = (uint64_t)(uintptr_t)thread ^ (uint64_t)mh_now_ns() ^
                 (atomic_fetch_add_explicit(&sequence, 1, memory_order_relaxed) * 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    thread->rng = z == 0 ? 1 : z;
}

// The chance that an allocation of `request` bytes is sampled.
static double sample_probability(int64_t request) {
    return -expm1(-(double)request / (double)mh_config.stack_sample_bytes);
}

int64_t mh_weight_bytes(int64_t request, int64_t usable) {
    return (int64_t)((double)usable / sample_probability(request) + 0.5);
}

void mh_sample_slow(void *block, int64_t request, void *frame) {
    struct mh_thread *thread = &mh_tls;
    if (thread->guard) {
        // Allocations made inside the agent are not part of the program's sample stream.
        thread->countdown += request;
        return;
    }
    thread->guard = 1;
    if (!thread->ready) {
        // A new thread: its first distance is drawn now, and this allocation is measured against it.
        thread->ready = 1;
        seed(thread);
        thread->countdown = draw_countdown(thread) - request;
        if (thread->countdown > 0) {
            thread->guard = 0;
            return;
        }
    }
    thread->countdown = draw_countdown(thread);
    uint32_t stack = stack_of(thread, frame);
    // Sampled by requested bytes, weighed in usable (size-class) bytes: the estimate stays unbiased in the
    // currency of stats.allocated and of the exact count.
    double probability = sample_probability(request);
    int64_t usable = (int64_t)mh_sallocx(block, 0);
    struct mh_sampled sampled = {
        .stack = stack,
        .bytes = (int64_t)((double)usable / probability + 0.5),
        .count_fx = (int64_t)((double)MH_COUNT_ONE / probability + 0.5),
    };
    if (insert_block(block, stack, sampled.bytes, sampled.count_fx)) {
        add_to_stack(&sampled, 1);
        atomic_fetch_add_explicit(&mh_samples_taken, 1, memory_order_relaxed);
    } else {
        // Every shard's pool is bounded: a sample that finds its shard full is counted and left out.
        atomic_fetch_add_explicit(&mh_samples_dropped, 1, memory_order_relaxed);
    }
    thread->guard = 0;
}

// ---- The lifecycle's steps: a fork child (or a capture) sees the tables in a consistent state -----------------------
void mh_stacks_lock(void) {
    if (mh_stacks == NULL) return;
    mh_lock_take(&stack_lock);
    for (size_t i = 0; i < MH_SHARDS; i++) mh_lock_take(&shards[i].lock);
}

void mh_stacks_unlock(void) {
    if (mh_stacks == NULL) return;
    for (size_t i = MH_SHARDS; i-- > 0;) mh_lock_release(&shards[i].lock);
    mh_lock_release(&stack_lock);
}

void mh_stacks_child(void) {
    if (mh_stacks == NULL) return;
    for (size_t i = 0; i < MH_SHARDS; i++) mh_lock_reset(&shards[i].lock);
    mh_lock_reset(&stack_lock);
    // main_thread stays: the forking thread keeps its pthread_t and its stack in the child, so the
    // bounds found for it (now or later) are the same as in the parent.
}

// The frames of stack `id` (innermost first); the depth.
int mh_stack_frames(uint32_t id, const uintptr_t **frames) {
    if (mh_stacks == NULL || id == 0 || id >= atomic_load_explicit(&mh_stack_count, memory_order_acquire)) return 0;
    *frames = &mh_frame_pool[mh_stacks[id].first_frame];
    return mh_stacks[id].depth;
}
