#define _GNU_SOURCE
#include "memharness_system.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int memharness_rename_exchange(const char *a, const char *b) {
    // The raw system call: glibc's renameat2 wrapper exists since 2.28, the syscall since Linux 3.15.
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}
