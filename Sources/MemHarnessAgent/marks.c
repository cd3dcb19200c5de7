// Copies of the live set per stack (the `peak` snapshot and labelled marks) and the record writer.
//
// The `peak` snapshot follows the exact live bytes: stacks imply EXACT, and the interposer calls
// mh_peak_candidate on each new high past the threshold, so the snapshot holds a spike of microseconds that no
// sampler would see. (It once followed the footprint a sampler read when EXACT was off: a 32 MiB spike at the
// true peak was missing from the snapshot, a 16 MiB block freed before it kept.)
// It is retaken when the live bytes exceed the last snapshot's level by the step
// (MEMHARNESS_AGENT_SNAPSHOT_STEP, default 0.5%) and at least 64 KiB, so it is never more than one step
// below the true peak, and the number of snapshots grows with the logarithm of the peak, not with time.
//
// All storage is mmap'd at start-up; everything here runs under one lock (`marks_lock`). The interposer
// only ever try-locks it: an allocation never waits for a snapshot or a record being written.
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MH_MAX_MARKS 4096
#define MH_LIVE_ROWS (1u << 18)  // stacks with sampled blocks alive at one instant: a snapshot beyond it is dropped
#define MH_MARK_ROWS (1u << 20)
#define MH_LABEL_CAPACITY 64
#define MH_SNAPSHOT_MIN_STEP ((int64_t)64 << 10)

struct mh_row {
    uint32_t stack;
    int64_t bytes;
    int64_t count_fx;
};

struct mh_mark {
    char label[MH_LABEL_CAPACITY];
    int64_t time_ns;
    int64_t level;
    uint32_t first_row;
    uint32_t rows;
    bool live;  // false once a mark of the same label replaced it
};

static mh_lock marks_lock;
static bool marks_ready;
static struct mh_row *peak_rows;   // MH_LIVE_ROWS rows
static struct mh_row *end_rows;    // the same, for the `end` mark of a record
static struct mh_row *mark_rows;   // every labelled mark's rows, appended
static struct mh_mark *marks;
static uint64_t *referenced;       // one bit per stack id, rebuilt by each record
static uint32_t mark_count, mark_rows_used;
static struct mh_mark peak_mark;
static bool peak_valid;
static int64_t marks_dropped;

bool mh_marks_init(void) {
    if (!mh_config.exact && mh_config.stack_sample_bytes == 0 && mh_config.record_path[0] == 0) return true;
    peak_rows = mh_map(sizeof(struct mh_row) * MH_LIVE_ROWS);
    end_rows = mh_map(sizeof(struct mh_row) * MH_LIVE_ROWS);
    mark_rows = mh_map(sizeof(struct mh_row) * MH_MARK_ROWS);
    marks = mh_map(sizeof(struct mh_mark) * MH_MAX_MARKS);
    referenced = mh_map(MH_MAX_STACKS / 8);
    marks_ready = peak_rows && end_rows && mark_rows && marks && referenced;
    memcpy(peak_mark.label, "peak", 5);
    return marks_ready;
}

static bool exact_mode(void) { return (atomic_load_explicit(&mh_state, memory_order_relaxed) & MH_EXACT) != 0; }

// A mark's level: the exact live bytes; 0 when the agent does not count (the harness asks for a record and
// marks only with exact counts, which stacks imply).
static int64_t signal_now(void) {
    return exact_mode() ? atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed) : 0;
}

// Rows for every stack with sampled blocks alive now; -1 when they do not fit in `capacity`.
// Other threads keep allocating meanwhile: each stack's figures are read once, atomically, so the copy
// is a live set of an instant per stack, within the copy's few microseconds of each other.
static int64_t copy_live_set(struct mh_row *rows, size_t capacity) {
    if (mh_stacks == NULL) return 0;
    uint32_t count = atomic_load_explicit(&mh_stack_count, memory_order_acquire);
    size_t used = 0;
    for (uint32_t id = 0; id < count; id++) {
        int64_t bytes = atomic_load_explicit(&mh_stacks[id].live_bytes, memory_order_relaxed);
        int64_t count_fx = atomic_load_explicit(&mh_stacks[id].live_count_fx, memory_order_relaxed);
        if (bytes == 0 && count_fx == 0) continue;
        if (used == capacity) return -1;
        rows[used++] = (struct mh_row){.stack = id, .bytes = bytes, .count_fx = count_fx};
    }
    return (int64_t)used;
}

static int64_t next_threshold(int64_t level) {
    double step = (double)level * mh_config.snapshot_step;
    int64_t by = step > (double)MH_SNAPSHOT_MIN_STEP ? (int64_t)step : MH_SNAPSHOT_MIN_STEP;
    return level > INT64_MAX - by ? INT64_MAX : level + by;
}

static void take_peak_locked(int64_t level, int64_t time_ns) {
    int64_t rows = copy_live_set(peak_rows, MH_LIVE_ROWS);
    peak_mark.rows = rows < 0 ? 0 : (uint32_t)rows;
    peak_mark.level = level;
    peak_mark.time_ns = time_ns;
    peak_valid = true;
    atomic_store_explicit(&mh_counts.snapshot_threshold, next_threshold(level), memory_order_relaxed);
}

void mh_peak_candidate(int64_t level) {
    if (!marks_ready || !mh_lock_try(&marks_lock)) return;
    // A heap still rising while its snapshot is copied gets up to 4 rounds here; after that, the next
    // allocation past the threshold retries (an allocation must not be held up for long).
    for (int round = 0; round < 4; round++) {
        if (level <= atomic_load_explicit(&mh_counts.snapshot_threshold, memory_order_relaxed)) break;
        take_peak_locked(level, mh_relative_ns());
        level = atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed);
    }
    mh_lock_release(&marks_lock);
}

void memharness_agent_restart_peak_snapshot(int64_t level_bytes) {
    mh_lock_take(&marks_lock);
    peak_valid = false;
    atomic_store_explicit(&mh_counts.snapshot_threshold, level_bytes, memory_order_relaxed);
    if (exact_mode()) {
        atomic_store_explicit(&mh_counts.baseline_bytes, atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed),
                              memory_order_relaxed);
        mh_reset_mark(&mh_counts.record_peak_bytes);
    }
    mh_lock_release(&marks_lock);
}

static void copy_label(char *out, const char *label) {
    size_t length = 0;
    if (label != NULL) {
        // Labels are one field of a text line: at most 63 bytes, and nothing that would split the field.
        for (; label[length] != 0 && length < MH_LABEL_CAPACITY - 1; length++) {
            unsigned char c = (unsigned char)label[length];
            out[length] = (c <= ' ' || c == 0x7f) ? '_' : (char)c;
        }
    }
    if (length == 0) {
        memcpy(out, "unnamed", 8);
        return;
    }
    out[length] = 0;
}

void memharness_agent_mark(const char *label, int64_t time_ns) {
    if (!marks_ready) return;
    char name[MH_LABEL_CAPACITY];
    copy_label(name, label);
    int64_t level = signal_now();
    mh_lock_take(&marks_lock);
    for (uint32_t i = 0; i < mark_count; i++) {
        if (marks[i].live && strcmp(marks[i].label, name) == 0) marks[i].live = false;
    }
    int64_t rows = mark_count < MH_MAX_MARKS ? copy_live_set(mark_rows + mark_rows_used, MH_MARK_ROWS - mark_rows_used) : -1;
    if (rows < 0) {
        // Full (4,096 marks or 1 Mi rows): this mark is not stored; the record says how many were not.
        marks_dropped++;
    } else {
        struct mh_mark *mark = &marks[mark_count++];
        memcpy(mark->label, name, sizeof(name));
        mark->time_ns = time_ns;
        mark->level = level;
        mark->first_row = mark_rows_used;
        mark->rows = (uint32_t)rows;
        mark->live = true;
        mark_rows_used += (uint32_t)rows;
    }
    mh_lock_release(&marks_lock);
}

void mh_marks_lock(void) { mh_lock_take(&marks_lock); }
void mh_marks_unlock(void) { mh_lock_release(&marks_lock); }
// The child's `peak` snapshot is its own: the parent's is forgotten, the next taken above the heap it began with.
void mh_marks_child(void) {
    mh_lock_reset(&marks_lock);
    peak_valid = false;
    if (exact_mode()) {
        atomic_store_explicit(&mh_counts.snapshot_threshold, atomic_load_explicit(&mh_counts.live_bytes, memory_order_relaxed),
                              memory_order_relaxed);
    }
}

// ---- The record ---------------------------------------------------------------------------------------
// Written through the agent's writer; its buffer is static (under marks_lock), not on a caller's stack that may be
// small (the exit steps run on whatever thread called exit).
static struct mh_writer out;
static char out_buffer[16384];

static void out_text(const char *text) { mh_put_text(&out, text); }
static void out_i64(int64_t value) { mh_put_decimal(&out, value); }
static void out_hex(uint64_t value) { mh_put_address(&out, value); }
static void out_char(char c) { mh_put_char(&out, c); }
static void out_path(const char *path) { mh_put_path(&out, path); }
static void out_key_i64(const char *key, int64_t value) { mh_put_key(&out, key, value); }

static int write_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    int *index = data;
    bool main_program = (*index)++ == 0;
    const char *name = info->dlpi_name;
    char executable[MH_PATH_CAPACITY];
    if (name == NULL || name[0] == 0) {
        if (!main_program) return 0;  // an unnamed object other than the program has no file to read
        ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
        if (length <= 0) return 0;
        executable[length] = 0;
        name = executable;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_LOAD || !(header->p_flags & PF_X)) continue;
        uint64_t start = info->dlpi_addr + header->p_vaddr;
        out_text("module ");
        out_hex(info->dlpi_addr);
        out_char(' ');
        out_hex(start);
        out_char(' ');
        out_hex(start + header->p_memsz);
        out_char(' ');
        out_path(name);
        out_char('\n');
    }
    return 0;
}

static void note_referenced(const struct mh_row *rows, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) referenced[rows[i].stack / 64] |= (uint64_t)1 << (rows[i].stack % 64);
}

static void write_mark(const char *label, int64_t time_ns, int64_t level, const struct mh_row *rows, uint32_t count) {
    out_text("mark ");
    out_text(label);
    out_char(' ');
    out_i64(time_ns);
    out_char(' ');
    out_i64(level);
    out_char('\n');
    for (uint32_t i = 0; i < count; i++) {
        out_text("live ");
        out_i64(rows[i].stack);
        out_char(' ');
        out_i64(rows[i].bytes);
        out_char(' ');
        // The count estimate in whole blocks, rounded to nearest.
        out_i64((rows[i].count_fx + MH_COUNT_ONE / 2) / MH_COUNT_ONE);
        out_char('\n');
    }
}

// The record's head: the process, the modes, the exact figures, what was dropped, the modules.
static void write_header(void) {
    mh_writer_header(&out, MH_FILE_RECORD);
    out_key_i64("pid", (int64_t)getpid());
    char executable[MH_PATH_CAPACITY];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
    executable[length > 0 ? length : 0] = 0;
    out_text("program ");
    out_path(executable);
    out_char('\n');
    bool stacks = (atomic_load_explicit(&mh_state, memory_order_relaxed) & MH_STACKS) != 0;
    out_key_i64("stackSampleBytes", stacks ? mh_config.stack_sample_bytes : 0);
    if (exact_mode()) {
        out_text("exact ");
        out_i64(atomic_load_explicit(&mh_counts.baseline_bytes, memory_order_relaxed));
        out_char(' ');
        out_i64(atomic_load_explicit(&mh_counts.record_peak_bytes, memory_order_relaxed));
        out_char(' ');
        out_i64(mh_allocation_calls());
        out_char('\n');
    }
    out_key_i64("droppedSamples", atomic_load_explicit(&mh_samples_dropped, memory_order_relaxed));
    out_key_i64("droppedMarks", marks_dropped);
    int index = 0;
    dl_iterate_phdr(write_module, &index);
}

// Stacks first, only those some mark uses (the peak, the live labelled marks, `end`), in id order.
static void write_stacks(uint32_t end_rows_count) {
    memset(referenced, 0, MH_MAX_STACKS / 8);
    if (peak_valid) note_referenced(peak_rows, peak_mark.rows);
    for (uint32_t i = 0; i < mark_count; i++) {
        if (marks[i].live) note_referenced(mark_rows + marks[i].first_row, marks[i].rows);
    }
    note_referenced(end_rows, end_rows_count);
    uint32_t stack_count = mh_stacks ? atomic_load_explicit(&mh_stack_count, memory_order_acquire) : 0;
    for (uint32_t id = 0; id < stack_count; id++) {
        if (!(referenced[id / 64] & ((uint64_t)1 << (id % 64)))) continue;
        const struct mh_stack *stack = &mh_stacks[id];
        out_text("stack ");
        out_i64(id);
        for (uint32_t f = 0; f < stack->depth; f++) {
            out_char(' ');
            out_hex(mh_frame_pool[stack->first_frame + f]);
        }
        out_char('\n');
        if (stack->truncated) out_key_i64("truncated", id);
    }
}

// Marks in the order they were taken; `peak` where its time puts it.
static void write_marks(void) {
    bool peak_written = !peak_valid;
    for (uint32_t i = 0; i < mark_count; i++) {
        const struct mh_mark *mark = &marks[i];
        if (!mark->live) continue;
        if (!peak_written && mark->time_ns > peak_mark.time_ns) {
            write_mark("peak", peak_mark.time_ns, peak_mark.level, peak_rows, peak_mark.rows);
            peak_written = true;
        }
        write_mark(mark->label, mark->time_ns, mark->level, mark_rows + mark->first_row, mark->rows);
    }
    if (!peak_written) write_mark("peak", peak_mark.time_ns, peak_mark.level, peak_rows, peak_mark.rows);
}

static void write_contents(void) {
    write_header();
    if (!marks_ready) return;
    // The live set now, as mark `end`, written last.
    int64_t end_time = mh_relative_ns();
    int64_t end_level = signal_now();
    int64_t end_count = copy_live_set(end_rows, MH_LIVE_ROWS);
    uint32_t end_rows_count = end_count < 0 ? 0 : (uint32_t)end_count;
    write_stacks(end_rows_count);
    write_marks();
    write_mark("end", end_time, end_level, end_rows, end_rows_count);
}

int memharness_agent_write_record(const char *path) {
    if (path == NULL || path[0] == 0) return EINVAL;
    if (strlen(path) + 5 > MH_PATH_CAPACITY) return ENAMETOOLONG;
    mh_lock_take(&marks_lock);
    int error = mh_writer_open(&out, path, out_buffer, sizeof(out_buffer));
    if (error == 0) {
        write_contents();
        out_text("end\n");
        error = mh_writer_finish(&out, true);
    }
    mh_lock_release(&marks_lock);
    return error;
}

// At exit: the record (MEMHARNESS_AGENT_RECORD). A forked child whose pattern has no %p would overwrite its parent's
// record: it writes none.
void mh_record_at_exit(int status, const struct mh_stopped *caller) {
    (void)status;
    (void)caller;
    if (mh_config.record_path[0] == 0 || (mh_forked_child && !mh_pattern_has_pid(mh_config.record_path))) return;
    static char path[MH_PATH_CAPACITY];
    if (!mh_expand_path(mh_config.record_path, path, sizeof(path))) {
        mh_warn("MEMHARNESS_AGENT_RECORD is too long once %p is replaced; no record");
    } else if (memharness_agent_write_record(path) != 0) {
        mh_warn("cannot write the record to MEMHARNESS_AGENT_RECORD");
    }
}
