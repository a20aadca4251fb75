/*
 * What a fuzz program shared: the global handles its creates gave and the
 * NT handles (natively fds) its calls gave, so an open can name a live
 * one, a stale one or something else entirely; and the private broker
 * every run uses.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

void fuzz_share_add_global(struct fuzz_prog *p, D3DKMT_HANDLE global)
{
    if (!global)
        return;
    if ((global & 3) != 2)
        fuzz_finding("a create gave global handle %#x, not one with low bits 2", global);
    if (p->shares.nglobal < FUZZ_MAX_SHARES)
        p->shares.global[p->shares.nglobal++] = global;
    fuzz_peer_offer_global(global);
}

void fuzz_share_add_nt(struct fuzz_prog *p, HANDLE nt, const char *call)
{
    intptr_t fd = (intptr_t)nt;

    struct stat st;

    if (fd < 0 || fd > INT32_MAX || fstat((int)fd, &st)) {
        fuzz_finding("%s succeeded with NT handle %#llx, no fd of the process", call, (unsigned long long)fd);
        return;
    }
    /* natively an NT handle is one end of a socket pair (broker.h): any
     * other fd is one the library keeps, which the harness must not close */
    if (!S_ISSOCK(st.st_mode)) {
        fuzz_finding("%s succeeded with NT handle %d, which is no socket", call, (int)fd);
        return;
    }
    for (unsigned i = 0; i < p->shares.nnt; i++)
        if (p->shares.nt[i] == fd && !p->shares.nt_closed[i])
            fuzz_finding("%s gave NT handle %d, which the program already holds", call, (int)fd);
    if (p->shares.nnt == FUZZ_MAX_SHARES) {
        close((int)fd);                 /* no room to use it: closed at once */
        return;
    }
    p->shares.nt[p->shares.nnt] = (int)fd;
    p->shares.nt_closed[p->shares.nnt++] = false;
    fuzz_peer_offer_nt((int)fd);
}

D3DKMT_HANDLE fuzz_share_global(struct fuzz_prog *p)
{
    uint8_t how = fuzz_u8(&p->in);

    if (how % 8 < 5 && p->shares.nglobal)     /* mostly one a create gave */
        return p->shares.global[fuzz_u8(&p->in) % p->shares.nglobal];
    switch (how % 4) {
    case 0: return 0;
    case 1: return fuzz_u32(&p->in);
    case 2: return 0x40000002u | (fuzz_u8(&p->in) << 6);     /* a global handle's shape */
    default: return fuzz_pool_handle(&p->pool, (enum fuzz_kind)(fuzz_u8(&p->in) % FK_KINDS), &p->in);
    }
}

HANDLE fuzz_share_nt(struct fuzz_prog *p)
{
    uint8_t how = fuzz_u8(&p->in);

    if (how % 8 < 5 && p->shares.nnt)         /* mostly one the program got, perhaps closed */
        return (HANDLE)(intptr_t)p->shares.nt[fuzz_u8(&p->in) % p->shares.nnt];
    switch (how % 4) {
    case 0: return NULL;
    case 1: return (HANDLE)(intptr_t)(fuzz_u8(&p->in) & 1 ? -1 : 1000000);   /* no such fd */
    case 2: return (HANDLE)(intptr_t)fuzz_eventfds[fuzz_u8(&p->in) & 1];    /* an fd of another kind */
    default: return (HANDLE)(intptr_t)(int)fuzz_u32(&p->in);
    }
}

void fuzz_share_close_one(struct fuzz_prog *p)
{
    unsigned i = p->shares.nnt ? fuzz_u8(&p->in) % p->shares.nnt : 0;

    if (i < p->shares.nnt && !p->shares.nt_closed[i]) {
        close(p->shares.nt[i]);
        p->shares.nt_closed[i] = true;
    }
}

void fuzz_share_close_all(struct fuzz_prog *p)
{
    for (unsigned i = 0; i < p->shares.nnt; i++)
        if (!p->shares.nt_closed[i]) {
            close(p->shares.nt[i]);
            p->shares.nt_closed[i] = true;
        }
}

OBJECT_ATTRIBUTES *fuzz_share_name(struct fuzz_prog *p)
{
    static const char *const names[] = { "kmtfuzz-a", "KMTFUZZ-A", "kmtfuzz-b", "\\BaseNamedObjects\\kmtfuzz" };
    OBJECT_ATTRIBUTES *attrs;
    UNICODE_STRING *us;
    WCHAR *buf;
    const char *name;
    uint8_t how = fuzz_u8(&p->in);
    size_t n;

    if (how % 8 == 0)
        return NULL;
    if (!(attrs = fuzz_arena_alloc(sizeof(*attrs))) || !(us = fuzz_arena_alloc(sizeof(*us))))
        return NULL;
    attrs->Length = how % 16 == 1 ? fuzz_u32(&p->in) : sizeof(*attrs);
    if (how % 8 == 2)
        return attrs;                   /* no name */
    name = names[fuzz_u8(&p->in) % (sizeof(names) / sizeof(names[0]))];
    n = strlen(name);
    if (!(buf = fuzz_arena_alloc(n * sizeof(WCHAR))))
        return NULL;
    for (size_t i = 0; i < n; i++)
        buf[i] = (WCHAR)name[i];
    us->Buffer = buf;
    us->Length = us->MaximumLength = (USHORT)(n * sizeof(WCHAR));
    if (how % 8 == 3) {                 /* odd or absurd lengths, a NULL buffer */
        us->Length = (USHORT)fuzz_u32(&p->in);
        us->MaximumLength = (USHORT)fuzz_u32(&p->in);
        if (us->Length > n * sizeof(WCHAR))
            us->Buffer = fuzz_u8(&p->in) & 1 ? NULL : (WCHAR *)(uintptr_t)0x1000;
    }
    attrs->ObjectName = us;
    return attrs;
}

static char broker_dir[64];

static void remove_broker_dir(void)
{
    static const char *const files[] = { "socket", "lock" };
    char path[128];

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", broker_dir, files[i]);
        unlink(path);
    }
    rmdir(broker_dir);
}

void fuzz_share_private_broker(void)
{
    snprintf(broker_dir, sizeof(broker_dir), "/tmp/kmtshim-fuzz-XXXXXX");
    if (!mkdtemp(broker_dir)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    setenv("KMTSHIM_BROKER_DIR", broker_dir, 1);
    setenv("KMTSHIM_BROKER_LINGER_MS", "100", 0);
    atexit(remove_broker_dir);
}
