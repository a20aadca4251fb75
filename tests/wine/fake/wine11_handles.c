/*
 * The fake Wine 11's handle tables (wine11.h): local handles from index 0,
 * global handles from index 0 with low bits 2, NT handles as event handles.
 */
#include "wine11.h"

#define LOCAL_SLOTS 1024
#define GLOBAL_SLOTS 256
#define HANDLE_BIT 0x40000000u

typedef NTSTATUS (WINAPI *compare_objects_fn)(HANDLE first, HANDLE second);

static SRWLOCK lock = SRWLOCK_INIT;
static struct fake_object locals[LOCAL_SLOTS];
static struct fake_global globals[GLOBAL_SLOTS];
static unsigned next_local, next_global;

void fake_lock(void)
{
    AcquireSRWLockExclusive(&lock);
}

void fake_unlock(void)
{
    ReleaseSRWLockExclusive(&lock);
}

/* Wine's allocation: the first free slot from the one after the last
 * handed out, wrapping around. */
static unsigned next_free(unsigned *next, unsigned slots, BOOL (*is_free)(unsigned))
{
    for (unsigned n = 0; n < slots; n++) {
        unsigned i = (*next + n) % slots;

        if (is_free(i)) {
            *next = i + 1;
            return i;
        }
    }
    return slots;
}

static BOOL local_free(unsigned i)
{
    return locals[i].type == FAKE_FREE;
}

static BOOL global_free(unsigned i)
{
    return globals[i].type == FAKE_FREE;
}

struct fake_object *fake_new(enum fake_type type, D3DKMT_HANDLE parent)
{
    unsigned i = next_free(&next_local, LOCAL_SLOTS, local_free);
    struct fake_object *object;

    if (i == LOCAL_SLOTS)
        return NULL;
    object = &locals[i];
    object->type = type;
    object->handle = HANDLE_BIT | i << 6;
    object->parent = parent;
    object->global = NULL;
    object->owner = FALSE;
    return object;
}

struct fake_object *fake_get(D3DKMT_HANDLE handle, enum fake_type type)
{
    unsigned i = (handle & ~0xc0000000u) >> 6;

    if (i >= LOCAL_SLOTS || locals[i].type != type || locals[i].handle != handle)
        return NULL;
    return &locals[i];
}

void fake_free(struct fake_object *object)
{
    if (object->global)
        fake_global_unref(object->global);
    object->type = FAKE_FREE;
    object->handle = 0;
}

void fake_free_children(D3DKMT_HANDLE parent)
{
    for (unsigned i = 0; i < LOCAL_SLOTS; i++) {
        if (locals[i].type != FAKE_FREE && locals[i].parent == parent) {
            D3DKMT_HANDLE child = locals[i].handle;

            fake_free(&locals[i]);
            fake_free_children(child);
        }
    }
}

struct fake_global *fake_global_new(enum fake_type type)
{
    unsigned i = next_free(&next_global, GLOBAL_SLOTS, global_free);
    struct fake_global *global;

    if (i == GLOBAL_SLOTS)
        return NULL;
    global = &globals[i];
    global->type = type;
    global->handle = HANDLE_BIT | i << 6 | 2;
    global->refs = 1;
    global->nt_event = NULL;
    global->mutex = global->sync = NULL;
    global->key = 0;
    global->owned = FALSE;
    return global;
}

struct fake_global *fake_global_get(D3DKMT_HANDLE handle, enum fake_type type)
{
    unsigned i = (handle & ~0xc000003fu) >> 6;

    if ((handle & 0x3f) != 2 || i >= GLOBAL_SLOTS || globals[i].type != type || globals[i].handle != handle)
        return NULL;
    return &globals[i];
}

void fake_global_ref(struct fake_global *global)
{
    global->refs++;
}

void fake_global_unref(struct fake_global *global)
{
    if (--global->refs)
        return;
    if (global->mutex)
        fake_global_unref(global->mutex);
    if (global->sync)
        fake_global_unref(global->sync);
    global->type = FAKE_FREE;
    global->handle = 0;
}

struct fake_global *fake_global_from_nt(HANDLE handle)
{
    static compare_objects_fn compare;

    if (!compare &&
        !(compare = (compare_objects_fn)(void *)GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtCompareObjects")))
        return NULL;
    for (unsigned i = 0; i < GLOBAL_SLOTS; i++)
        if (globals[i].type != FAKE_FREE && globals[i].nt_event && !compare(globals[i].nt_event, handle))
            return &globals[i];
    return NULL;
}
