/*
 * kmtshim.dll: the duplicates of the events async CPU waits reuse.
 *
 * A runtime waits on the same event every frame
 * (WaitForSynchronizationObjectFromCpu with hAsyncEvent, as
 * SetEventOnCompletion does).  Querying the event's type, duplicating it
 * and closing the duplicate again are three wineserver requests per wait.
 * Instead, the duplicate stays here once the core is done with it, keyed by
 * (device, the program's handle value), and the next wait with that handle
 * takes it again after one check, NtCompareObjects, that the program's
 * handle still names the same object: a program that closed its event and
 * got the same handle value for another object gets a fresh duplicate.
 *
 * An entry is either idle (here) or busy (the core holds it: one wait at a
 * time; a second wait with the same handle meanwhile gets a duplicate of
 * its own, as without the cache).  DestroyDevice closes the device's idle
 * entries, and its busy ones once the core is done with them, so a program
 * keeps no handle of kmtshim's after its devices are gone.
 */
#include "pe.h"

#define CACHE_SIZE 16

struct cache_entry {
    HANDLE event;                        /* the program's handle value; NULL: free slot */
    HANDLE dup;                          /* kmtshim's duplicate */
    D3DKMT_HANDLE device;
    BOOL busy;                           /* the core holds dup */
    BOOL doomed;                         /* its device is gone: close dup when released */
};

NTSTATUS NTAPI NtCompareObjects(HANDLE first, HANDLE second);

static SRWLOCK lock = SRWLOCK_INIT;
static struct cache_entry entries[CACHE_SIZE];
static volatile LONG used;               /* entries in use: DestroyDevice looks only then */
static unsigned next_victim;

static struct cache_entry *find_locked(D3DKMT_HANDLE device, HANDLE event)
{
    for (unsigned i = 0; i < CACHE_SIZE; i++)
        if (entries[i].event == event && entries[i].device == device)
            return &entries[i];
    return NULL;
}

static void free_locked(struct cache_entry *e)
{
    e->event = NULL;
    e->dup = NULL;
    e->busy = e->doomed = FALSE;
    InterlockedDecrement(&used);
}

HANDLE kmt_event_cache_take(D3DKMT_HANDLE device, HANDLE event)
{
    struct cache_entry *e;
    HANDLE dup;

    if (!used)
        return NULL;
    AcquireSRWLockExclusive(&lock);
    if (!(e = find_locked(device, event)) || e->busy) {
        ReleaseSRWLockExclusive(&lock);
        return NULL;
    }
    e->busy = TRUE;                      /* ours while we check it */
    dup = e->dup;
    ReleaseSRWLockExclusive(&lock);
    if (!NtCompareObjects(event, dup)) {
        PE_TRACE("event %p: kmtshim's duplicate %p again\n", event, dup);
        return dup;
    }
    /* closed, or the value names another object now */
    PE_TRACE("event %p: no longer the object of duplicate %p\n", event, dup);
    AcquireSRWLockExclusive(&lock);
    free_locked(e);
    ReleaseSRWLockExclusive(&lock);
    CloseHandle(dup);
    return NULL;
}

void kmt_event_cache_adopt(D3DKMT_HANDLE device, HANDLE event, HANDLE dup)
{
    struct cache_entry *e = NULL, *victim = NULL;
    HANDLE evicted = NULL;

    AcquireSRWLockExclusive(&lock);
    if (find_locked(device, event)) {
        ReleaseSRWLockExclusive(&lock);  /* that one is busy: this dup stays uncached */
        return;
    }
    for (unsigned i = 0; i < CACHE_SIZE && !e; i++)
        if (!entries[i].event)
            e = &entries[i];
    /* full: the next idle entry after the last one evicted makes room */
    for (unsigned i = 0; i < CACHE_SIZE && !e && !victim; i++) {
        struct cache_entry *c = &entries[(next_victim + i) % CACHE_SIZE];

        if (!c->busy) {
            victim = c;
            next_victim = (unsigned)(c - entries + 1) % CACHE_SIZE;
        }
    }
    if (victim) {
        evicted = victim->dup;
        free_locked(victim);
        e = victim;
    }
    if (e) {
        e->event = event;
        e->dup = dup;
        e->device = device;
        e->busy = TRUE;
        e->doomed = FALSE;
        InterlockedIncrement(&used);
    }
    ReleaseSRWLockExclusive(&lock);
    if (evicted)
        CloseHandle(evicted);
}

/* The entry of `dup`, busy, or NULL. */
static struct cache_entry *find_dup_locked(HANDLE dup)
{
    for (unsigned i = 0; i < CACHE_SIZE; i++)
        if (entries[i].event && entries[i].dup == dup && entries[i].busy)
            return &entries[i];
    return NULL;
}

BOOL kmt_event_cache_release(HANDLE dup)
{
    struct cache_entry *e;
    BOOL close = FALSE;

    if (!used)
        return FALSE;
    AcquireSRWLockExclusive(&lock);
    if (!(e = find_dup_locked(dup))) {
        ReleaseSRWLockExclusive(&lock);
        return FALSE;
    }
    if (e->doomed) {
        free_locked(e);
        close = TRUE;
    } else {
        e->busy = FALSE;
    }
    ReleaseSRWLockExclusive(&lock);
    if (close)
        CloseHandle(dup);
    return TRUE;
}

void kmt_event_cache_discard(HANDLE dup)
{
    struct cache_entry *e;

    if (used) {
        AcquireSRWLockExclusive(&lock);
        if ((e = find_dup_locked(dup)))
            free_locked(e);
        ReleaseSRWLockExclusive(&lock);
    }
    CloseHandle(dup);
}

void kmt_event_cache_drop_device(D3DKMT_HANDLE device)
{
    HANDLE closing[CACHE_SIZE];
    unsigned n = 0;

    if (!used)
        return;
    AcquireSRWLockExclusive(&lock);
    for (unsigned i = 0; i < CACHE_SIZE; i++) {
        struct cache_entry *e = &entries[i];

        if (!e->event || e->device != device)
            continue;
        if (e->busy) {
            e->doomed = TRUE;
        } else {
            closing[n++] = e->dup;
            free_locked(e);
        }
    }
    ReleaseSRWLockExclusive(&lock);
    while (n)
        CloseHandle(closing[--n]);
}
