// Files with no name: for the harness's heap captures.
#define _GNU_SOURCE
#include "memharness_system.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int memharness_open_unnamed_file(const char *directory) {
    int fd = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    // No O_TMPFILE on this file system: a name for an instant, unlinked before anything is written.
    char path[4096];
    int length = snprintf(path, sizeof(path), "%s/memharness-unnamed-XXXXXX", directory);
    if (length < 0 || (size_t)length >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) unlink(path);
    return fd;
}
