#define _GNU_SOURCE
#include "memharness_system.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
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

int memharness_library_path_of_symbol(const char *symbol, char *buffer, unsigned long size) {
    void *address = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL) return -1;
    // The main executable's name is not a shared library: a statically linked symbol.
    if (strstr(info.dli_fname, ".so") == NULL) return -1;
    size_t length = strlen(info.dli_fname);
    if (length + 1 > size) return -1;
    memcpy(buffer, info.dli_fname, length + 1);
    return 0;
}
