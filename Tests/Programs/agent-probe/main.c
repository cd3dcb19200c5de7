// agent-probe: a plain C program with known allocations, for the agent's tests and for trying
// `memharness profile` on something whose truth is known. It runs with or without the agent; with it
// (LD_PRELOAD="libmemharness-agent.so libjemalloc.so.2") it also prints the agent's own figures.
//
//   agent-probe hold <bytes> <ms>                      hold one block (every page touched) for <ms>
//   agent-probe spike [hold] [spike] [ms] [before]     holds <hold> (48MiB) and <before> (16MiB) for 100 ms, frees
//                                                      <before>, then a <spike> block (32MiB) alive ~<ms> (0: a few
//                                                      microseconds) on top of <hold>: the true peak is the spike's
//   agent-probe two-sites [ms]                         48 MiB from probe_site_large, 16 MiB from
//                                                      probe_site_small, 1 MiB blocks, held <ms> (200)
//   agent-probe churn <pairs>                          malloc/free pairs of 16 B-4 KiB, 64 alive; timed
//   agent-probe threads [blocks]                       two threads allocate, a third frees (4,000 blocks)
//   agent-probe fork [children]                        forks children that allocate (4) while a thread churns
//   agent-probe _exit <bytes> <status>                 holds a block and ends with _exit(<status>): no exit handler
//   agent-probe marks <record>                         the control API: marks, capture_stack, write_record
//   agent-probe self-check                             the agent's self-check rows
//   agent-probe mmap <bytes> <ms> [mallocBytes]        map and touch a block with mmap (as a program with an
//                                                      allocator or a heap of its own), held <ms>; with
//                                                      <mallocBytes>, a touched malloc'd block held beside it
//   agent-probe attributes [threads]                  threads whose first allocation is pthread_getattr_np's (4)
//   agent-probe leaks [capture-path]                   blocks leaked and kept in known ways (see run_leaks); with
//                                                      the agent tracking the heap, a heap capture to the path
//
// Sizes take a suffix: 64MiB, 512KiB, 2GiB (or plain bytes). Output is one `key value...` fact per line.
// Every function named probe_* keeps its frame (a frame pointer) whatever the optimization level, so an
// allocation stack unwound by frame pointers passes through it; they are never inlined.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROBE __attribute__((noinline))
// Taking the frame's address forces the function to set up its frame pointer, even at -O2.
static void *volatile frame_sink;
#define KEEP_FRAME() (frame_sink = __builtin_frame_address(0))

static void *volatile sink;

// ---- The agent, when preloaded --------------------------------------------------------------------------
typedef struct {
    const char *name;
    int64_t expected_delta_bytes, delta_bytes, expected_release_bytes, release_bytes, counted_calls;
} check_row;

static int64_t (*agent_live_bytes)(void);
static int64_t (*agent_take_peak)(void);
static int64_t (*agent_allocation_count)(void);

static void find_agent(void) {
    agent_live_bytes = (int64_t (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_live_bytes");
    agent_take_peak = (int64_t (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_take_peak");
    agent_allocation_count = (int64_t (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_allocation_count");
    printf("agent %s\n", agent_live_bytes ? "loaded" : "absent");
}

static int64_t live_bytes(void) { return agent_live_bytes ? agent_live_bytes() : -1; }

// ---- Helpers ------------------------------------------------------------------------------------------------
static int64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int64_t cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void sleep_ms(int64_t ms) {
    struct timespec duration = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&duration, &duration) == -1 && errno == EINTR) {
    }
}

static int64_t parse_bytes(const char *text) {
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno != 0 || end == text || value < 0) {
        fprintf(stderr, "agent-probe: '%s' is not a size (e.g. 64MiB, 512KiB, 4096)\n", text);
        exit(64);
    }
    static const struct {
        const char *suffix;
        int shift;
    } units[] = {{"", 0}, {"B", 0}, {"KiB", 10}, {"K", 10}, {"MiB", 20}, {"M", 20}, {"GiB", 30}, {"G", 30}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) return (int64_t)value << units[i].shift;
    }
    fprintf(stderr, "agent-probe: unknown unit in '%s'; expected B, KiB, MiB or GiB\n", text);
    exit(64);
}

static int64_t argument(int argc, char **argv, int index, const char *fallback) {
    return parse_bytes(index < argc ? argv[index] : fallback);
}

static void touch_pages(char *block, size_t size) {
    for (size_t offset = 0; offset < size; offset += 4096) block[offset] = (char)offset;
    if (size > 0) block[size - 1] = 1;
}

static void print_function(const char *name, void *address) { printf("function %s %p\n", name, address); }

// ---- hold ---------------------------------------------------------------------------------------------------
PROBE static void *probe_hold_block(size_t size) {
    KEEP_FRAME();
    char *block = malloc(size);
    if (block == NULL) {
        fprintf(stderr, "agent-probe: malloc(%zu) failed\n", size);
        exit(70);
    }
    touch_pages(block, size);
    return block;
}

static int run_hold(int64_t size, int64_t ms) {
    print_function("probe_hold_block", (void *)probe_hold_block);
    int64_t before = live_bytes();
    void *block = probe_hold_block((size_t)size);
    printf("hold requested %lld usable %zu address %p\n", (long long)size, malloc_usable_size(block), block);
    printf("live before %lld held %lld\n", (long long)before, (long long)live_bytes());
    fflush(stdout);
    // The probe allocates nothing while it sleeps: any call counted meanwhile is another thread's (the agent's sampler).
    int64_t calls_before = agent_allocation_count ? agent_allocation_count() : -1;
    sleep_ms(ms);
    int64_t calls_after = agent_allocation_count ? agent_allocation_count() : -1;
    free(block);
    printf("sleep calls_before %lld calls_after %lld\n", (long long)calls_before, (long long)calls_after);
    printf("live after %lld\n", (long long)live_bytes());
    return 0;
}

// ---- spike --------------------------------------------------------------------------------------------------
PROBE static int64_t probe_spike(size_t size, int64_t ms) {
    KEEP_FRAME();
    int64_t start = now_ns();
    char *block = malloc(size);
    if (block == NULL) exit(70);
    sink = block;
    block[0] = 1;  // the pages stay untouched: the spike is in the heap, and short
    int64_t usable = (int64_t)malloc_usable_size(block);
    while (now_ns() - start < ms * 1000000) {
    }
    free(block);
    printf("spike usable %lld lasted_ns %lld\n", (long long)usable, (long long)(now_ns() - start));
    return usable;
}

PROBE static void *probe_before_spike(size_t size) {
    KEEP_FRAME();
    char *block = malloc(size);
    if (block == NULL) exit(70);
    touch_pages(block, size);
    return block;
}

static int run_spike(int64_t hold, int64_t spike, int64_t ms, int64_t before) {
    print_function("probe_hold_block", (void *)probe_hold_block);
    print_function("probe_spike", (void *)probe_spike);
    print_function("probe_before_spike", (void *)probe_before_spike);
    if (agent_take_peak) agent_take_peak();
    void *block = probe_hold_block((size_t)hold);
    printf("hold requested %lld usable %zu\n", (long long)hold, malloc_usable_size(block));
    if (before > 0) {
        // Long enough for any sampler to see hold + before: the sampled peak, below the true one.
        void *first = probe_before_spike((size_t)before);
        printf("before usable %zu\n", malloc_usable_size(first));
        sleep_ms(100);
        free(first);
    }
    sleep_ms(20);
    probe_spike((size_t)spike, ms);
    sleep_ms(20);
    if (agent_take_peak) printf("peak %lld live %lld\n", (long long)agent_take_peak(), (long long)live_bytes());
    free(block);
    return 0;
}

// ---- two sites ----------------------------------------------------------------------------------------------
#define SITE_BLOCK ((size_t)1 << 20)
static void *large_blocks[48], *small_blocks[16];

PROBE static void probe_site_large(void) {
    KEEP_FRAME();
    for (int i = 0; i < 48; i++) {
        large_blocks[i] = malloc(SITE_BLOCK);
        touch_pages(large_blocks[i], SITE_BLOCK);
    }
}

PROBE static void probe_site_small(void) {
    KEEP_FRAME();
    for (int i = 0; i < 16; i++) {
        small_blocks[i] = malloc(SITE_BLOCK);
        touch_pages(small_blocks[i], SITE_BLOCK);
    }
}

static int run_two_sites(int64_t ms) {
    print_function("probe_site_large", (void *)probe_site_large);
    print_function("probe_site_small", (void *)probe_site_small);
    probe_site_large();
    probe_site_small();
    printf("two-sites large %zu small %zu live %lld\n", 48 * malloc_usable_size(large_blocks[0]),
           16 * malloc_usable_size(small_blocks[0]), (long long)live_bytes());
    fflush(stdout);
    sleep_ms(ms);
    for (int i = 0; i < 48; i++) free(large_blocks[i]);
    for (int i = 0; i < 16; i++) free(small_blocks[i]);
    return 0;
}

// ---- churn --------------------------------------------------------------------------------------------------
// The calibration workload's `churn` in C: a ring of 64 slots, sizes from a fixed-seed xorshift64*.
PROBE static int64_t probe_churn(int64_t pairs, int live, size_t max_size) {
    KEEP_FRAME();
    void *slots[64] = {0};
    uint64_t state = 0x9E3779B97F4A7C15ull;
    int64_t live_bytes = 0;
    for (int64_t operation = 0; operation < pairs; operation++) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        uint64_t random = state * 0x2545F4914F6CDD1Dull;
        size_t size = 16 + (size_t)(random % (max_size - 15));
        int slot = (int)(operation % live);
        if (slots[slot] != NULL) {
            live_bytes -= (int64_t)malloc_usable_size(slots[slot]);
            free(slots[slot]);
        }
        char *block = malloc(size);
        if (block != NULL) {
            block[0] = (char)operation;  // the block is really used
            live_bytes += (int64_t)malloc_usable_size(block);
        }
        slots[slot] = block;
    }
    for (int i = 0; i < live; i++) free(slots[i]);
    return live_bytes;
}

static int run_churn(int64_t pairs) {
    int64_t wall = now_ns(), cpu = cpu_ns();
    int64_t held = probe_churn(pairs, 64, 4096);
    wall = now_ns() - wall;
    cpu = cpu_ns() - cpu;
    printf("churn pairs %lld wall_ns %lld cpu_ns %lld ns_per_pair %.2f held_at_end %lld\n", (long long)pairs, (long long)wall,
           (long long)cpu, pairs > 0 ? (double)wall / (double)pairs : 0.0, (long long)held);
    return 0;
}

// ---- threads ------------------------------------------------------------------------------------------------
// Two producers allocate, one consumer frees: every block dies on a thread other than its own.
#define QUEUE_CAPACITY 64
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    void *items[QUEUE_CAPACITY];
    int head, count, producers_left;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static int64_t blocks_per_producer;

PROBE static void *probe_thread_block(int64_t index) {
    KEEP_FRAME();
    // Every 8th block is 256 KiB (sampled at any usual mean), the others 64 B-8 KiB.
    size_t size = index % 8 == 0 ? (size_t)256 << 10 : (size_t)(64 + (index * 977) % 8128);
    char *block = malloc(size);
    if (block != NULL) block[0] = 1;
    return block;
}

static void *producer(void *argument) {
    (void)argument;
    for (int64_t i = 0; i < blocks_per_producer; i++) {
        void *block = probe_thread_block(i);
        pthread_mutex_lock(&queue.lock);
        while (queue.count == QUEUE_CAPACITY) pthread_cond_wait(&queue.changed, &queue.lock);
        queue.items[(queue.head + queue.count) % QUEUE_CAPACITY] = block;
        queue.count++;
        pthread_cond_broadcast(&queue.changed);
        pthread_mutex_unlock(&queue.lock);
    }
    pthread_mutex_lock(&queue.lock);
    queue.producers_left--;
    pthread_cond_broadcast(&queue.changed);
    pthread_mutex_unlock(&queue.lock);
    return NULL;
}

static void *consumer(void *argument) {
    int64_t *freed = argument;
    for (;;) {
        pthread_mutex_lock(&queue.lock);
        while (queue.count == 0 && queue.producers_left > 0) pthread_cond_wait(&queue.changed, &queue.lock);
        if (queue.count == 0) {
            pthread_mutex_unlock(&queue.lock);
            return NULL;
        }
        void *block = queue.items[queue.head];
        queue.head = (queue.head + 1) % QUEUE_CAPACITY;
        queue.count--;
        pthread_cond_broadcast(&queue.changed);
        pthread_mutex_unlock(&queue.lock);
        free(block);
        (*freed)++;
    }
}

static int run_threads(int64_t blocks) {
    print_function("probe_thread_block", (void *)probe_thread_block);
    // Start and join one thread first, so what glibc keeps per started thread is in place before `before`.
    pthread_t warmup;
    int64_t unused = 0;
    queue.producers_left = 0;
    pthread_create(&warmup, NULL, consumer, &unused);
    pthread_join(warmup, NULL);

    int64_t before = live_bytes();
    int64_t calls_before = agent_allocation_count ? agent_allocation_count() : -1;
    blocks_per_producer = blocks / 2;
    queue.producers_left = 2;
    int64_t freed = 0;
    pthread_t producers[2], eater;
    pthread_create(&eater, NULL, consumer, &freed);
    for (int i = 0; i < 2; i++) pthread_create(&producers[i], NULL, producer, NULL);
    for (int i = 0; i < 2; i++) pthread_join(producers[i], NULL);
    pthread_join(eater, NULL);
    int64_t calls = agent_allocation_count ? agent_allocation_count() - calls_before : -1;
    printf("threads allocated %lld freed %lld calls %lld\n", (long long)(2 * blocks_per_producer), (long long)freed, (long long)calls);
    printf("live before %lld after %lld\n", (long long)before, (long long)live_bytes());
    return freed == 2 * blocks_per_producer ? 0 : 1;
}

// ---- fork ---------------------------------------------------------------------------------------------------
static volatile int churning = 1;

static void *background_churn(void *argument) {
    (void)argument;
    while (churning) probe_churn(10000, 64, 65536);
    return NULL;
}

PROBE static void *probe_child_block(size_t size) {
    KEEP_FRAME();
    char *block = malloc(size);
    if (block != NULL) touch_pages(block, size);
    return block;
}

static int run_fork(int64_t children) {
    print_function("probe_child_block", (void *)probe_child_block);
    printf("parent pid %d\n", (int)getpid());
    pthread_t churner;
    pthread_create(&churner, NULL, background_churn, NULL);
    int failures = 0;
    for (int64_t i = 0; i < children; i++) {
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) {
            perror("agent-probe: fork");
            failures++;
            continue;
        }
        if (child == 0) {
            // The child allocates at once (a lock inherited held would hang it here), holds 8 MiB, and
            // exits through exit() so the agent's exit handler writes the child's files.
            void *blocks[256];
            for (int k = 0; k < 256; k++) blocks[k] = malloc((size_t)(16 + k * 61));
            for (int k = 0; k < 256; k++) free(blocks[k]);
            void *held = probe_child_block((size_t)8 << 20);
            printf("child %d held %zu live %lld\n", (int)getpid(), malloc_usable_size(held), (long long)live_bytes());
            fflush(stdout);
            exit(0);
        }
        int status = 0;
        // Bounded: a child that has not finished within 10 s is reported hung and killed.
        int64_t deadline = now_ns() + (int64_t)10 * 1000000000;
        pid_t done;
        while ((done = waitpid(child, &status, WNOHANG)) == 0 && now_ns() < deadline) sleep_ms(1);
        if (done == 0) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            printf("child %d hung\n", (int)child);
            failures++;
            continue;
        }
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        printf("child %d status %d\n", (int)child, code);
        if (code != 0) failures++;
    }
    churning = 0;
    pthread_join(churner, NULL);
    printf("fork children %lld failures %d\n", (long long)children, failures);
    return failures == 0 ? 0 : 1;
}

// ---- marks: the control API as the harness uses it --------------------------------------------------------
PROBE static int probe_marks(const char *record) {
    KEEP_FRAME();
    void (*mark)(const char *, int64_t) = (void (*)(const char *, int64_t))dlsym(RTLD_DEFAULT, "memharness_agent_mark");
    void (*restart)(int64_t) = (void (*)(int64_t))dlsym(RTLD_DEFAULT, "memharness_agent_restart_peak_snapshot");
    int (*capture)(uintptr_t *, int) = (int (*)(uintptr_t *, int))dlsym(RTLD_DEFAULT, "memharness_agent_capture_stack");
    int (*write_record)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "memharness_agent_write_record");
    if (!mark || !restart || !capture || !write_record) {
        fprintf(stderr, "agent-probe: the agent is not loaded\n");
        return 2;
    }
    restart(live_bytes() > 0 ? live_bytes() : 0);
    mark("baseline", now_ns());
    void *held = probe_hold_block((size_t)8 << 20);
    mark("after hold", now_ns());  // the space becomes '_' in the record
    free(held);
    mark("after-free", now_ns());
    uintptr_t frames[8];
    int depth = capture(frames, 8);
    printf("capture %d", depth);
    for (int i = 0; i < depth; i++) printf(" %#lx", (unsigned long)frames[i]);
    printf("\n");
    int error = write_record(record);
    printf("write_record %d\n", error);
    return error == 0 ? 0 : 1;
}

// ---- attributes -------------------------------------------------------------------------------------------
// Threads whose first allocation is glibc's own, inside pthread_getattr_np, which holds the thread's lock while it
// allocates its cpuset (every JVM thread starts so, to learn its stack's bounds). Each one then walks its own stack
// with the agent (capture_stack, when loaded). Prints `attributes threads N stacks S` (S: those whose stack size
// pthread_getattr_np told) and `attributes-capture <depth> <frames>` for the first thread.
struct attributes_result {
    size_t stack_size;
    int depth;
    uintptr_t frames[8];
};

PROBE static void *probe_attributes_thread(void *argument) {
    KEEP_FRAME();
    struct attributes_result *result = argument;
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
        void *low;
        if (pthread_attr_getstack(&attributes, &low, &result->stack_size) != 0) result->stack_size = 0;
        pthread_attr_destroy(&attributes);
    }
    int (*capture)(uintptr_t *, int) = (int (*)(uintptr_t *, int))dlsym(RTLD_DEFAULT, "memharness_agent_capture_stack");
    result->depth = capture ? capture(result->frames, 8) : -1;
    return NULL;
}

static int run_attributes(int64_t count) {
    if (count < 1 || count > 64) count = 4;
    print_function("probe_attributes_thread", (void *)probe_attributes_thread);
    struct attributes_result results[64];
    pthread_t threads[64];
    memset(results, 0, sizeof(results));
    for (int64_t i = 0; i < count; i++) pthread_create(&threads[i], NULL, probe_attributes_thread, &results[i]);
    int told = 0;
    for (int64_t i = 0; i < count; i++) {
        pthread_join(threads[i], NULL);
        if (results[i].stack_size > 0) told++;
    }
    printf("attributes threads %lld stacks %d\n", (long long)count, told);
    printf("attributes-capture %d", results[0].depth);
    for (int i = 0; i < results[0].depth; i++) printf(" %#lx", (unsigned long)results[0].frames[i]);
    printf("\n");
    return told == count ? 0 : 1;
}

// ---- self-check ---------------------------------------------------------------------------------------------
static int run_self_check(void) {
    int (*self_check)(check_row *, int) = (int (*)(check_row *, int))dlsym(RTLD_DEFAULT, "memharness_agent_self_check");
    if (self_check == NULL) {
        fprintf(stderr, "agent-probe: the agent is not loaded (LD_PRELOAD=\"libmemharness-agent.so libjemalloc.so.2\")\n");
        return 2;
    }
    int (*fast)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_fast_size_classes");
    int (*forwards)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_forwards_to_fast_paths");
    int (*stacks)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_stacks_enabled");
    printf("fast_size_classes %d forwards_to_fast_paths %d stacks_enabled %d\n", fast ? fast() : -1, forwards ? forwards() : -1,
           stacks ? stacks() : -1);
    check_row rows[64];
    int count = self_check(rows, 64);
    if (count < 0) {
        fprintf(stderr, "agent-probe: the self-check needs MEMHARNESS_AGENT_EXACT=1\n");
        return 3;
    }
    printf("check name | expected | counted | expected release | released | calls\n");
    for (int i = 0; i < count && i < 64; i++) {
        printf("check %s | %lld | %lld | %lld | %lld | %lld\n", rows[i].name, (long long)rows[i].expected_delta_bytes,
               (long long)rows[i].delta_bytes, (long long)rows[i].expected_release_bytes, (long long)rows[i].release_bytes,
               (long long)rows[i].counted_calls);
    }
    return 0;
}

// ---- mmap: memory the allocator never sees ---------------------------------------------------------------
static int run_mmap(int64_t size, int64_t ms, int64_t malloc_bytes) {
    void *held = malloc_bytes > 0 ? probe_hold_block((size_t)malloc_bytes) : NULL;
    char *block = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) {
        perror("agent-probe: mmap");
        return 70;
    }
    touch_pages(block, (size_t)size);
    printf("mmap bytes %lld malloc %zu\n", (long long)size, held ? malloc_usable_size(held) : 0);
    sleep_ms(ms);
    munmap(block, (size_t)size);
    free(held);
    return 0;
}


// ---- leaks: blocks whose fate is known by construction, for the heap graph and for valgrind ----------------------
// Every block has a size of its own, so a leak report (ours or valgrind's) names it by its size:
//   1000 B  lost: its only pointer overwritten                                  leaked (definitely lost)
//   2000 B  x2  two structs pointing at each other, nothing else at them         leaked, one cycle
//   3000 B  kept only by a pointer with its top bit set (a tagged pointer) in    live: the capture clears the tag;
//           a block the global holds                                             valgrind cannot see through it
//   4000 B  the tagged pointer's holder, kept by a global                        live (still reachable)
//   5000 B  kept only on the stack of a thread blocked in read(2)                live
//   6000 B  kept only in a callee-saved register (r12/x19) of that thread         live
// With a capture path and the agent tracking the heap, the probe captures the heap while the thread is blocked
// (`capture rc <status>`), then exits without joining the thread, as a leak checker at exit sees it. With
// `at-exit` it calls exit(3) instead, and the agent (MEMHARNESS_AGENT_HEAP_AT_EXIT) captures the heap there.
void *volatile probe_global_holder;
static int probe_pipe[2];

PROBE static void *probe_blocked_thread(void *argument) {
    (void)argument;
    KEEP_FRAME();
    void *volatile on_stack = malloc(5000);
    memset((void *)on_stack, 5, 5000);
#if defined(__x86_64__)
    register void *in_register __asm__("r12") = malloc(6000);
#elif defined(__aarch64__)
    register void *in_register __asm__("x19") = malloc(6000);
#else
    void *in_register = malloc(6000);
#endif
    __asm__ volatile("" : "+r"(in_register));
    memset(in_register, 6, 6000);
    // Announce readiness, then block in read(2) until the main thread writes (it never does before exit).
    char byte = 1;
    if (write(probe_pipe[1], &byte, 1) != 1) return NULL;
    while (read(probe_pipe[0] == -1 ? 0 : probe_pipe[0], &byte, 1) == 0) {
    }
    __asm__ volatile("" : "+r"(in_register));
    free(in_register);
    free((void *)on_stack);
    return NULL;
}

PROBE static void probe_lose_blocks(void) {
    KEEP_FRAME();
    void *volatile lost = malloc(1000);
    memset((void *)lost, 1, 1000);
    lost = NULL;
    void **volatile first = malloc(2000);
    void **volatile second = malloc(2000);
    memset((void *)first, 0, 2000);
    memset((void *)second, 0, 2000);
    first[0] = (void *)second;
    second[0] = (void *)first;
    first = second = NULL;
    uintptr_t *holder = malloc(4000);
    memset(holder, 0, 4000);
    void *tagged = malloc(3000);
    memset(tagged, 3, 3000);
    holder[0] = (uintptr_t)tagged | ((uintptr_t)1 << 63);
    probe_global_holder = holder;
}

static int run_leaks(const char *capture_path) {
    int ready[2];
    if (pipe(ready) != 0 || pipe(probe_pipe) != 0) return 70;
    int write_end = probe_pipe[1];
    probe_pipe[1] = ready[1];
    pthread_t thread;
    if (pthread_create(&thread, NULL, probe_blocked_thread, NULL) != 0) return 70;
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 70;
    probe_pipe[1] = write_end;
    probe_lose_blocks();
    // Scrub the stack below this frame: the callee's dead slots must not keep its lost blocks alive.
    volatile char scrub[16384];
    memset((void *)scrub, 0, sizeof(scrub));
    // `leaks at-exit`: no capture here; exit(3) runs the agent's exit handler, which captures the heap then.
    int capture_at_exit = capture_path != NULL && strcmp(capture_path, "at-exit") == 0;
    if (capture_path != NULL && !capture_at_exit) {
        int (*capture)(const char *, const char *) =
            (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "memharness_agent_capture_heap");
        printf("capture rc %d\n", capture ? capture(capture_path, "leak fixtures") : -1);
    }
    printf("leaks done\n");
    fflush(stdout);
    if (capture_at_exit) exit(0);
    _exit(0);
}

// ---- harness-words: the harness's own blocks keep only what the harness wrote -----------------------------------
// A capture scans the blocks the harness allocated for itself (memharness_agent_harness_begin) as roots. Two blocks
// are leaked by construction, each with its address left in memory a block is made in next:
//   7000 B  its address fills a program block that is freed; the harness's next block of that size class is made
//           in the same memory (jemalloc's thread cache hands the last freed block out first) and kept
//   8000 B  its address fills a harness block that is freed; the program's next block of that size class is made
//           in the same memory, kept by a global and never written
// Both are leaked: a harness block is zeroed when it is made and when it is released. The probe prints whether each
// reuse happened (`reuse program-to-harness 1 harness-to-program 1`), without which the test proves nothing.
void *volatile probe_harness_block;
void *volatile probe_program_block;

PROBE static void fill_with(void *block, size_t bytes, void *word) {
    for (size_t i = 0; i < bytes / sizeof(void *); i++) ((void *volatile *)block)[i] = word;
}

PROBE static void probe_leave_words(int *program_to_harness, int *harness_to_program) {
    KEEP_FRAME();
    void (*begin)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_harness_begin");
    void (*end)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_harness_end");
    if (begin == NULL || end == NULL) return;
    void *volatile first = malloc(7000);
    memset((void *)first, 7, 7000);
    void *volatile program = malloc(1500);
    fill_with((void *)program, 1500, (void *)first);
    free((void *)program);
    begin();
    probe_harness_block = malloc(1500);
    end();
    *program_to_harness = probe_harness_block == program;
    first = program = NULL;

    void *volatile second = malloc(8000);
    memset((void *)second, 8, 8000);
    begin();
    void *volatile harness = malloc(2500);
    fill_with((void *)harness, 2500, (void *)second);
    end();
    free((void *)harness);
    probe_program_block = malloc(2500);
    *harness_to_program = probe_program_block == harness;
    second = harness = NULL;
}

static int run_harness_words(const char *capture_path) {
    int program_to_harness = 0, harness_to_program = 0;
    probe_leave_words(&program_to_harness, &harness_to_program);
    volatile char scrub[16384];
    memset((void *)scrub, 0, sizeof(scrub));
    printf("reuse program-to-harness %d harness-to-program %d\n", program_to_harness, harness_to_program);
    int (*capture)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "memharness_agent_capture_heap");
    printf("capture rc %d\n", capture ? capture(capture_path, "harness words") : -1);
    return 0;
}

// ---- pinned ---------------------------------------------------------------------------------------------------
// `count` blocks of `size` bytes, each written, then a small block after them (it pins the heap's top), held `ms`;
// then every block but the pin freed and `ms` more: the allocator keeps the freed memory (glibc's arena cannot shrink
// below a live block; jemalloc keeps dirty pages until they decay). Prints the allocator the agent found.
static int run_pinned(int64_t size, int64_t count, int64_t ms) {
    int (*allocator)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "memharness_agent_allocator");
    void **blocks = calloc((size_t)count, sizeof(void *));
    if (blocks == NULL) return 70;
    for (int64_t i = 0; i < count; i++) {
        blocks[i] = malloc((size_t)size);
        if (blocks[i] == NULL) return 70;
        memset(blocks[i], (int)(i & 0x7f) | 1, (size_t)size);
    }
    void *pin = malloc(64);
    sink = pin;
    printf("pinned allocator %d held %lld live %lld\n", allocator ? allocator() : -1, (long long)(size * count),
           (long long)live_bytes());
    fflush(stdout);
    sleep_ms(ms);
    int64_t checksum = 0;
    for (int64_t i = 0; i < count; i++) {
        checksum += ((volatile char *)blocks[i])[size - 1];
        free(blocks[i]);
    }
    free(blocks);
    printf("pinned freed checksum %lld live %lld\n", (long long)checksum, (long long)live_bytes());
    fflush(stdout);
    sleep_ms(ms);
    return 0;  // the pin stays: at exit the freed blocks are still the allocator's

}

static int usage(void) {
    fprintf(stderr,
            "usage: agent-probe hold <bytes> <ms> | spike [hold] [spike] [ms] [before] | two-sites [ms] |\n"
            "       churn <pairs> | threads [blocks] | fork [children] | _exit <bytes> <status> | marks <record> |\n"
            "       self-check | mmap <bytes> <ms> [mallocBytes] | attributes [threads] | leaks [capture-path | at-exit] |\n"
            "       harness-words <capture-path> | pinned <bytes> <count> <ms>\n");
    return 64;
}

int main(int argc, char **argv) {
    KEEP_FRAME();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) return usage();
    const char *mode = argv[1];
    find_agent();
    if (strcmp(mode, "hold") == 0) return run_hold(argument(argc, argv, 2, "64MiB"), argument(argc, argv, 3, "200"));
    if (strcmp(mode, "spike") == 0) {
        return run_spike(argument(argc, argv, 2, "48MiB"), argument(argc, argv, 3, "32MiB"), argument(argc, argv, 4, "0"),
                         argument(argc, argv, 5, "16MiB"));
    }
    if (strcmp(mode, "two-sites") == 0) return run_two_sites(argument(argc, argv, 2, "200"));
    if (strcmp(mode, "churn") == 0) return run_churn(argument(argc, argv, 2, "20000000"));
    if (strcmp(mode, "threads") == 0) return run_threads(argument(argc, argv, 2, "4000"));
    if (strcmp(mode, "fork") == 0) return run_fork(argument(argc, argv, 2, "4"));
    if (strcmp(mode, "marks") == 0 && argc > 2) {
        print_function("probe_hold_block", (void *)probe_hold_block);
        print_function("probe_marks", (void *)probe_marks);
        return probe_marks(argv[2]);
    }
    if (strcmp(mode, "self-check") == 0) return run_self_check();
    if (strcmp(mode, "_exit") == 0) {
        void *held = probe_hold_block((size_t)argument(argc, argv, 2, "8MiB"));
        printf("_exit held %zu\n", malloc_usable_size(held));
        fflush(stdout);
        _exit((int)argument(argc, argv, 3, "0"));
    }
    if (strcmp(mode, "mmap") == 0) {
        return run_mmap(argument(argc, argv, 2, "64MiB"), argument(argc, argv, 3, "200"), argument(argc, argv, 4, "0"));
    }
    if (strcmp(mode, "attributes") == 0) return run_attributes(argument(argc, argv, 2, "4"));
    if (strcmp(mode, "leaks") == 0) return run_leaks(argc > 2 ? argv[2] : NULL);
    if (strcmp(mode, "harness-words") == 0 && argc > 2) return run_harness_words(argv[2]);
    if (strcmp(mode, "pinned") == 0) {
        return run_pinned(argument(argc, argv, 2, "1KiB"), argument(argc, argv, 3, "16384"), argument(argc, argv, 4, "300"));
    }
    return usage();
}
