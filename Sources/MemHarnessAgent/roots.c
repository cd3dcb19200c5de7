// What a heap capture reads besides the blocks: the modules and their writable segments, the process's mappings, and
// the roots.
//
// Roots: the writable PT_LOAD segments of every loaded module but the agent's (globals, statics and .bss), each
// stopped thread's stack from its stack pointer (less the red zone) to the end of the stack's mapping, each thread's
// static TLS and thread control block around its thread pointer, each stopped thread's general registers, and the
// capturing thread's program frames only (the frames its caller names: at exit, those of exit's caller; in a capture
// the harness asks for, those above the harness's own; never the agent's, whose stale words would keep blocks the
// program dropped). An edge is a word of a block or a root that, with Swift's spare bits cleared (0xFF00000000000007 on
// x86_64), falls inside a live block: interior pointers count. What is not scanned: memory the program maps itself
// (mmap outside malloc) and blocks allocated before the table existed (none: it exists before the first).
#include "agent_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// ---- Modules, their writable segments, and the mappings -------------------------------------------------------------
#define MH_MAX_SEGMENTS 2048
#define MH_MAX_MAPPINGS 65536

struct mh_segment {
    uintptr_t start, end, base;
    uint32_t module;
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
    uintptr_t tp = mh_thread_pointer();
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
bool mh_layout_read_mappings(uintptr_t excluded) {
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
const struct mh_range *mh_mapping_of(uintptr_t address) {
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

// Read before the world stops: dl_iterate_phdr takes the loader's lock, which a stopped thread may hold.
void mh_layout_read_modules(void) {
    layout.module_count = layout.segment_count = 0;
    layout.tls_below = 0;
    dl_iterate_phdr(collect_segments, (void *)(uintptr_t)&mh_layout_read_modules);
}

void mh_put_layout(struct mh_writer *writer) {
    mh_put_u64(writer, (uint64_t)layout.module_count);
    for (int i = 0; i < layout.module_count; i++) {
        mh_put_u64(writer, layout.bases[i]);
        uint32_t length = (uint32_t)strlen(layout.paths[i]);
        mh_put_u32(writer, length);
        mh_put(writer, layout.paths[i], length);
    }
    mh_put_u64(writer, (uint64_t)layout.segment_count);
    for (int i = 0; i < layout.segment_count; i++) {
        mh_put_u64(writer, layout.segments[i].start);
        mh_put_u64(writer, layout.segments[i].end);
        mh_put_u64(writer, layout.segments[i].module);
    }
}

enum { MH_ROOT_GLOBAL = 1, MH_ROOT_STACK = 2, MH_ROOT_REGISTER = 3, MH_ROOT_TLS = 4, MH_ROOT_HARNESS = 5 };

static void put_root(struct mh_writer *writer, uint32_t kind, uint32_t owner, uint64_t slot, int64_t target) {
    mh_put_u32(writer, kind);
    mh_put_u32(writer, owner);
    mh_put_u64(writer, slot);
    mh_put_u64(writer, (uint64_t)target);
}

static uint64_t scan_range_as_root(struct mh_writer *writer, const struct mh_sorted *sorted, uintptr_t start,
                                   uintptr_t end, uint32_t kind, uint32_t owner) {
    uint64_t roots = 0;
    for (uintptr_t slot = (start + 7) & ~(uintptr_t)7; slot + 8 <= end; slot += 8) {
        int64_t target = mh_block_of(sorted, *(const uintptr_t *)slot);
        if (target >= 0) {
            put_root(writer, kind, owner, slot, target);
            roots++;
        }
    }
    return roots;
}

// Stacks, TLS and registers of one thread (index `owner` in the thread section). The capturing thread (owner 0) has
// only the program frames its caller named: from `sp` up (none when `sp` is 0), and the registers it stored.
static uint64_t scan_thread(struct mh_writer *writer, const struct mh_sorted *sorted, const struct mh_stopped *thread,
                            uint32_t owner) {
    uint64_t roots = 0;
    const struct mh_range *stack = thread->sp != 0 ? mh_mapping_of(thread->sp) : NULL;
    if (stack != NULL) {
        // A stopped thread may have been in a leaf function using the 128 bytes below its stack pointer (the
        // x86-64 red zone); the capturing thread's program frames start where its caller said, exactly.
        uintptr_t red_zone = owner == 0 ? 0 : 128;
        uintptr_t from = thread->sp - red_zone >= stack->start ? thread->sp - red_zone : stack->start;
        roots += scan_range_as_root(writer, sorted, from, stack->end, MH_ROOT_STACK, owner);
    }
    const struct mh_range *tls = mh_mapping_of(thread->tp);
    if (tls != NULL && !(stack != NULL && tls == stack)) {
        uintptr_t from = thread->tp - layout.tls_below >= tls->start ? thread->tp - layout.tls_below : tls->start;
        uintptr_t to = thread->tp + 4096 <= tls->end ? thread->tp + 4096 : tls->end;
        roots += scan_range_as_root(writer, sorted, from, to, MH_ROOT_TLS, owner);
    }
    for (uint32_t i = 0; i < MH_REGISTERS; i++) {
        int64_t target = mh_block_of(sorted, thread->registers[i]);
        if (target >= 0) {
            put_root(writer, MH_ROOT_REGISTER, owner, i, target);
            roots++;
        }
    }
    return roots;
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

// The harness's own blocks are in no capture, but what they point at is kept by them (a cache the harness grew while it
// named a capture may hold blocks made before): their words are roots of their own kind. They hold nothing else: the
// agent zeroes a harness block when it is made and when it is released (agent.c, zero_harness_block).
struct harness_scan {
    struct mh_writer *writer;
    const struct mh_sorted *sorted;
    uint64_t roots;
};

static void scan_harness_block(uintptr_t address, uint64_t bytes, void *context) {
    struct harness_scan *scan = context;
    scan->roots += scan_range_as_root(scan->writer, scan->sorted, address, address + bytes, MH_ROOT_HARNESS, 0);
}

uint64_t mh_put_roots(struct mh_writer *writer, const struct mh_sorted *sorted, const struct mh_stopped *self,
                      const struct mh_stopped *stopped, uint32_t stopped_count) {
    uint64_t at = mh_writer_position(writer), roots = 0;
    mh_put_u64(writer, 0);
    for (int i = 0; i < layout.segment_count; i++) {
        roots += scan_range_as_root(writer, sorted, layout.segments[i].start, layout.segments[i].end, MH_ROOT_GLOBAL,
                                    layout.segments[i].module);
    }
    roots += scan_thread(writer, sorted, self, 0);
    for (uint32_t i = 0; i < stopped_count; i++) roots += scan_thread(writer, sorted, &stopped[i], i + 1);
    roots += scan_cached_thread_blocks(writer, sorted);
    struct harness_scan harness = {writer, sorted, 0};
    mh_blocks_each_harness(scan_harness_block, &harness);
    roots += harness.roots;
    mh_patch_u64(writer, at, roots);
    return roots;
}
