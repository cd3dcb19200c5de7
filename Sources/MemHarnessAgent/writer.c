// The one writer of the agent's files: the sample stream (sampler.c), the record (marks.c) and heap captures
// (capture.c). A buffer the caller provides (static storage or a mapping: nothing here allocates), flushed with
// write(2); text and little-endian binary puts; a shared first line; for a named file, `path`.tmp renamed into place
// once complete (or unlinked when anything failed), so a reader never sees half a file under the final name; a stream
// (the samples) is written under its name as it goes; a caller's descriptor is written where the file starts in it.
//
// The first line of every file is `memharness-agent-<kind> <version>\n`, the kinds and versions below. The readers
// (Attribution's AgentFileHeader) name the kind they expect and the versions they read, so a record given where a
// capture is expected, or a capture from an older agent, is a clear error, not garbage. A capture's binary sections
// follow its line directly.
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    int version;
} kinds[] = {
    [MH_FILE_SAMPLES] = {"samples", 1},
    [MH_FILE_RECORD] = {"record", 1},
    // 2: the shared first line instead of the MHHEAP01 magic, and a stack id for every block.
    [MH_FILE_CAPTURE] = {"capture", 2},
};

static void start(struct mh_writer *writer, int fd, bool owns, char *buffer, size_t capacity) {
    writer->fd = fd;
    writer->owns_fd = owns;
    writer->error = 0;
    writer->buffer = buffer;
    writer->used = 0;
    writer->capacity = capacity;
    writer->base = 0;
    writer->written = 0;
    writer->path[0] = 0;
}

// Creates `path`.tmp for writing; 0 or an errno.
int mh_writer_open(struct mh_writer *writer, const char *path, char *buffer, size_t capacity) {
    size_t length = strlen(path);
    if (length + 5 > sizeof(writer->path)) return ENAMETOOLONG;
    char temporary[MH_PATH_CAPACITY];
    memcpy(temporary, path, length);
    memcpy(temporary + length, ".tmp", 5);
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    start(writer, fd, true, buffer, capacity);
    memcpy(writer->path, path, length + 1);
    return 0;
}

// Creates `path` itself, written as it goes (a stream: what a killed process wrote before it died stays readable).
int mh_writer_stream(struct mh_writer *writer, const char *path, char *buffer, size_t capacity) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    start(writer, fd, true, buffer, capacity);
    return 0;
}

// Writes to a descriptor the caller owns: at its end (`append`, a file of several captures) or where it is.
int mh_writer_attach(struct mh_writer *writer, int fd, bool append, char *buffer, size_t capacity) {
    off_t at = lseek(fd, 0, append ? SEEK_END : SEEK_CUR);
    start(writer, fd, false, buffer, capacity);
    // A pipe has no offset: it is written in order, and a capture (which patches its counts) cannot go there.
    if (at < 0) return errno == ESPIPE ? ESPIPE : errno;
    writer->base = (uint64_t)at;
    return 0;
}

void mh_writer_header(struct mh_writer *writer, enum mh_file_kind kind) {
    mh_put_text(writer, "memharness-agent-");
    mh_put_text(writer, kinds[kind].name);
    mh_put_char(writer, ' ');
    mh_put_decimal(writer, kinds[kind].version);
    mh_put_char(writer, '\n');
}

void mh_writer_flush(struct mh_writer *writer) {
    if (writer->used > 0 && writer->error == 0) {
        // A file of its own is written in order; a caller's, where this file's part of it is (pwrite: the
        // descriptor's offset stays where the caller left it).
        if (writer->owns_fd) {
            if (!mh_write_all(writer->fd, writer->buffer, writer->used)) writer->error = errno ? errno : EIO;
        } else {
            const char *bytes = writer->buffer;
            size_t left = writer->used;
            uint64_t at = writer->base + writer->written;
            while (left > 0) {
                ssize_t done = pwrite(writer->fd, bytes, left, (off_t)at);
                if (done < 0 && errno == EINTR) continue;
                if (done <= 0) {
                    writer->error = done < 0 ? errno : EIO;
                    break;
                }
                bytes += done;
                left -= (size_t)done;
                at += (uint64_t)done;
            }
        }
    }
    writer->written += writer->used;
    writer->used = 0;
}

int mh_writer_finish(struct mh_writer *writer, bool keep) {
    mh_writer_flush(writer);
    int error = writer->error;
    if (!writer->owns_fd) return error;
    if (close(writer->fd) != 0 && error == 0) error = errno;
    writer->fd = -1;
    if (writer->path[0] == 0) return error;  // a stream
    size_t length = strlen(writer->path);
    char temporary[MH_PATH_CAPACITY];
    memcpy(temporary, writer->path, length);
    memcpy(temporary + length, ".tmp", 5);
    if (keep && error == 0 && rename(temporary, writer->path) != 0) error = errno;
    if (!keep || error != 0) unlink(temporary);
    return error;
}

void mh_put(struct mh_writer *writer, const void *bytes, size_t length) {
    const char *from = bytes;
    while (length > 0) {
        if (writer->used == writer->capacity) mh_writer_flush(writer);
        size_t room = writer->capacity - writer->used;
        size_t part = length < room ? length : room;
        memcpy(writer->buffer + writer->used, from, part);
        writer->used += part;
        from += part;
        length -= part;
    }
}

void mh_put_u32(struct mh_writer *writer, uint32_t value) { mh_put(writer, &value, 4); }
void mh_put_u64(struct mh_writer *writer, uint64_t value) { mh_put(writer, &value, 8); }

// Section counts are not known until a section is written: the writer remembers where to patch them.
uint64_t mh_writer_position(const struct mh_writer *writer) { return writer->written + writer->used; }

void mh_patch_u64(struct mh_writer *writer, uint64_t at, uint64_t value) {
    mh_writer_flush(writer);
    if (writer->error == 0 && pwrite(writer->fd, &value, 8, (off_t)(writer->base + at)) != 8) {
        writer->error = errno ? errno : EIO;
    }
}

void mh_put_text(struct mh_writer *writer, const char *text) { mh_put(writer, text, strlen(text)); }
void mh_put_char(struct mh_writer *writer, char c) { mh_put(writer, &c, 1); }

void mh_put_decimal(struct mh_writer *writer, int64_t value) {
    char digits[24];
    mh_put(writer, digits, (size_t)(mh_put_i64(digits, value) - digits));
}

void mh_put_address(struct mh_writer *writer, uint64_t value) {
    char digits[24];
    mh_put(writer, digits, (size_t)(mh_put_hex(digits, value) - digits));
}

// A path as the last field of a line: a newline in it would end the line, so it becomes '?'.
void mh_put_path(struct mh_writer *writer, const char *path) {
    for (; *path; path++) mh_put_char(writer, *path == '\n' ? '?' : *path);
}

void mh_put_key(struct mh_writer *writer, const char *key, int64_t value) {
    mh_put_text(writer, key);
    mh_put_char(writer, ' ');
    mh_put_decimal(writer, value);
    mh_put_char(writer, '\n');
}
