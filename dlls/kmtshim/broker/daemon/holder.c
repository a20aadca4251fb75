/*
 * The holder word (broker.h): when a client's connection ends, an object
 * whose word still names that client is marked abandoned and its waiters
 * are woken, so a keyed mutex held by a killed process is seen abandoned
 * by the others.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon.h"

/* The word is mapped and written whenever a client's connection ends, so
 * its file must stay at least that long and stay writable: a memfd sealed
 * against shrinking, opened for reading and writing, and not sealed
 * against writes.  Any other file could be truncated under the mapping
 * (SIGBUS in the broker) or refuse the write. */
bool holder_valid(int fd, int32_t offset)
{
    struct stat st;
    int seals, mode;

    if (offset < 0 || offset % 4)
        return false;
    if ((mode = fcntl(fd, F_GETFL)) < 0 || (mode & O_ACCMODE) != O_RDWR)
        return false;
    if ((seals = fcntl(fd, F_GET_SEALS)) < 0 || !(seals & F_SEAL_SHRINK)
        || (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
        return false;
    return !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= (off_t)offset + 4;
}

void holder_abandon(struct object *obj, uint32_t client_id)
{
    long page = sysconf(_SC_PAGESIZE);
    off_t base;
    uint32_t *word, seen;
    void *map;

    if (obj->holder_offset < 0)
        return;
    base = obj->holder_offset - obj->holder_offset % page;
    map = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, obj->fds[0], base);
    if (map == MAP_FAILED) {
        BROKER_ERR("cannot map object %#llx's holder word\n", (unsigned long long)obj->id);
        return;
    }
    word = (uint32_t *)((char *)map + (obj->holder_offset - base));
    /* the client's id, with or without the waiter bit a sleeper set */
    seen = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    while (seen != KMT_BROKER_HOLDER_ABANDONED && (seen & ~KMT_BROKER_HOLDER_WAITERS) == client_id) {
        if (__atomic_compare_exchange_n(word, &seen, KMT_BROKER_HOLDER_ABANDONED, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
            break;
        }
    }
    munmap(map, page);
}
