/*
 * bench_wine.exe: the cost of a D3DKMT call under Wine, through kmtshim and
 * through Wine's builtin gdi32, in one process.
 *
 *   no-op:  a call both sides refuse at once with STATUS_INVALID_PARAMETER,
 *           so only the call path is measured:
 *             D3DKMTCreateDevice with hAdapter 0 (Wine 8: a syscall into
 *             win32u's Unix side; kmtshim: a unix call into kmtshim.so)
 *             D3DKMTCloseAdapter with hAdapter 0 (Wine 8 calls its Unix
 *             side directly, without a PE->Unix transition)
 *   pair:   D3DKMTCreateDevice + D3DKMTDestroyDevice on an adapter of the
 *           same side (kmtshim's software adapter; Wine's display adapter)
 *
 * Each is measured through kmtshim.dll directly and, when this process has
 * the gdi32 proxy (kmtshim-prefix --proxy-exe bench_wine.exe), through the
 * proxy too; Wine's numbers come from Wine's own gdi32 (gdi32_orig.dll
 * under the proxy).  Best of 5 runs, ns per call.
 *
 * Then monitored fences through kmtshim.dll on the software adapter (Wine
 * has no sync objects to compare with), median of 5 runs, ns per round:
 *   signal + wait, 1 thread     SignalFromCpu, then a WaitFromCpu it satisfied
 *   async wait, 1 thread        WaitFromCpu with a Win32 event, SignalFromCpu
 *                               (sets the event before it returns),
 *                               WaitForSingleObject
 *   ping-pong, 2 threads        signal the partner's fence, wait for one's
 *                               own: blocking WaitFromCpu / async event +
 *                               WaitForSingleObject; per round trip
 *   submit + async wait         SubmitCommand [NOP, SIGNAL_FENCE], async wait,
 *                               WaitForSingleObject (the engine's thread
 *                               signals: the event pump sets the event)
 *   Win32 events, 1 thread      SetEvent + WaitForSingleObject, the floor of
 *                               the async wait's round under Wine
 *   Win32 events, 2 threads     SetEvent / WaitForSingleObject ping-pong, the
 *                               floor of the async ping-pong
 * and the async rows' ratios to their floors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmtshim/d3dkmthk.h"
#include "kmtshim/kmtsoft.h"

typedef NTSTATUS (APIENTRY *d3dkmt_fn)(void *desc);

struct side {
    const char *name;
    HMODULE module;
    d3dkmt_fn close, create, destroy;
    D3DKMT_HANDLE adapter;
};

typedef struct {
    WCHAR DeviceName[32];
    D3DKMT_HANDLE hAdapter;
    LUID AdapterLuid;
    UINT VidPnSourceId;
} open_gdi_desc;

static double ticks_per_ns;

static double now_ns(void)
{
    LARGE_INTEGER t;

    QueryPerformanceCounter(&t);
    return (double)t.QuadPart / ticks_per_ns;
}

static BOOL side_init(struct side *s, const char *name, HMODULE module)
{
    memset(s, 0, sizeof(*s));
    s->name = name;
    if (!(s->module = module))
        return FALSE;
    s->close = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTCloseAdapter");
    s->create = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTCreateDevice");
    s->destroy = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTDestroyDevice");
    return s->close && s->create && s->destroy;
}

/* kmtshim's software adapter (the first kmtshim enumerates). */
static D3DKMT_HANDLE kmtshim_adapter(HMODULE module)
{
    d3dkmt_fn enum2 = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTEnumAdapters2");
    D3DKMT_ADAPTERINFO info[34];
    D3DKMT_ENUMADAPTERS2 e = { 34, info };

    return enum2 && !enum2(&e) && e.NumAdapters ? info[0].hAdapter : 0;
}

/* Wine's adapter for the first display. */
static D3DKMT_HANDLE wine_adapter(HMODULE module)
{
    d3dkmt_fn open = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMTOpenAdapterFromGdiDisplayName");
    open_gdi_desc d = { { 0 } };

    lstrcpyW(d.DeviceName, L"\\\\.\\DISPLAY1");
    return open && !open(&d) ? d.hAdapter : 0;
}

/* fn(desc) n times, best of 5 runs; desc is zeroed: hAdapter 0 */
static double bench_noop(d3dkmt_fn fn, unsigned n)
{
    BYTE desc[sizeof(D3DKMT_CREATEDEVICE)];
    double best = 1e30;

    for (int run = 0; run < 5; run++) {
        double t0 = now_ns(), t;
        for (unsigned i = 0; i < n; i++) {
            memset(desc, 0, sizeof(desc));
            if (fn(desc) != (NTSTATUS)STATUS_INVALID_PARAMETER)
                return -1;
        }
        t = (now_ns() - t0) / n;
        if (t < best)
            best = t;
    }
    return best;
}

static double bench_pair(const struct side *s, unsigned n)
{
    double best = 1e30;

    for (int run = 0; run < 5; run++) {
        double t0 = now_ns(), t;
        for (unsigned i = 0; i < n; i++) {
            D3DKMT_CREATEDEVICE cd = { 0 };
            D3DKMT_DESTROYDEVICE dd = { 0 };

            cd.hAdapter = s->adapter;
            if (s->create(&cd))
                return -1;
            dd.hDevice = cd.hDevice;
            if (s->destroy(&dd))
                return -1;
        }
        t = (now_ns() - t0) / n;
        if (t < best)
            best = t;
    }
    return best;
}

static void row(const struct side *s, unsigned noop_n, unsigned pair_n, BOOL noops)
{
    double pair = s->adapter ? bench_pair(s, pair_n) : -1;

    printf("%-36s", s->name);
    if (noops)
        printf(" %16.1f %16.1f", bench_noop(s->create, noop_n), bench_noop(s->close, noop_n));
    else
        printf(" %16s %16s", "-", "-");
    if (pair >= 0)
        printf(" %16.1f\n", pair);
    else
        printf(" %16s\n", s->adapter ? "failed" : "no adapter");
}

/* ---- monitored fences ------------------------------------------------------------ */

#define RUNS 5
#define WAIT_MS 10000

struct fences {
    HMODULE module;
    d3dkmt_fn create_device, destroy_device, close_adapter, create_sync, destroy_sync, signal_cpu, wait_cpu;
    d3dkmt_fn create_context, destroy_context, create_alloc2, lock2, submit, destroy_alloc2;
    D3DKMT_HANDLE adapter, device;
};

static BOOL fences_init(struct fences *f, HMODULE module, D3DKMT_HANDLE adapter)
{
    D3DKMT_CREATEDEVICE cd = { 0 };

    memset(f, 0, sizeof(*f));
    f->module = module;
#define GET(field, name) (f->field = (d3dkmt_fn)(void *)GetProcAddress(module, "D3DKMT" name))
    if (!GET(create_device, "CreateDevice") || !GET(destroy_device, "DestroyDevice") ||
        !GET(close_adapter, "CloseAdapter") || !GET(create_sync, "CreateSynchronizationObject2") ||
        !GET(destroy_sync, "DestroySynchronizationObject") || !GET(signal_cpu, "SignalSynchronizationObjectFromCpu") ||
        !GET(wait_cpu, "WaitForSynchronizationObjectFromCpu") || !GET(create_context, "CreateContextVirtual") ||
        !GET(destroy_context, "DestroyContext") || !GET(create_alloc2, "CreateAllocation2") ||
        !GET(lock2, "Lock2") || !GET(submit, "SubmitCommand") || !GET(destroy_alloc2, "DestroyAllocation2"))
        return FALSE;
#undef GET
    cd.hAdapter = adapter;
    if (!adapter || f->create_device(&cd))
        return FALSE;
    f->adapter = adapter;
    f->device = cd.hDevice;
    return TRUE;
}

static D3DKMT_HANDLE fence_new(const struct fences *f)
{
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };

    cs.hDevice = f->device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    return f->create_sync(&cs) ? 0 : cs.hSyncObject;
}

static void fence_free(const struct fences *f, D3DKMT_HANDLE h)
{
    D3DKMT_DESTROYSYNCHRONIZATIONOBJECT d = { h };

    f->destroy_sync(&d);
}

static NTSTATUS fence_signal(const struct fences *f, D3DKMT_HANDLE h, UINT64 value)
{
    D3DKMT_SIGNALSYNCHRONIZATIONOBJECTFROMCPU s = { 0 };

    s.hDevice = f->device;
    s.ObjectCount = 1;
    s.ObjectHandleArray = &h;
    s.FenceValueArray = &value;
    return f->signal_cpu(&s);
}

/* event NULL: a blocking wait; else async, then WaitForSingleObject. */
static NTSTATUS fence_wait(const struct fences *f, D3DKMT_HANDLE h, UINT64 value, HANDLE event)
{
    D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };
    NTSTATUS status;

    w.hDevice = f->device;
    w.ObjectCount = 1;
    w.ObjectHandleArray = &h;
    w.FenceValueArray = &value;
    w.hAsyncEvent = event;
    if ((status = f->wait_cpu(&w)) || !event)
        return status;
    return WaitForSingleObject(event, WAIT_MS) == WAIT_OBJECT_0 ? STATUS_SUCCESS : STATUS_TIMEOUT;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* One measurement: `run(ctx, n, base)` does n rounds with fence values from
 * base + 1; median of RUNS runs after a warm-up, ns per round. */
typedef BOOL (*bench_fn)(void *ctx, unsigned n, UINT64 base);

static double median_of_runs(bench_fn run, void *ctx, unsigned n)
{
    double t[RUNS];
    UINT64 base = 0;

    if (!run(ctx, n / 10 + 1, base))
        return -1;
    base += n / 10 + 1;
    for (int r = 0; r < RUNS; r++, base += n) {
        double t0 = now_ns();
        if (!run(ctx, n, base))
            return -1;
        t[r] = (now_ns() - t0) / n;
    }
    qsort(t, RUNS, sizeof(t[0]), cmp_double);
    return t[RUNS / 2];
}

struct one_thread {
    const struct fences *f;
    D3DKMT_HANDLE fence;
    HANDLE event;                        /* NULL: blocking (already satisfied) waits */
};

static BOOL run_signal_wait(void *arg, unsigned n, UINT64 base)
{
    struct one_thread *c = arg;

    for (UINT64 v = base + 1; v <= base + n; v++) {
        if (c->event) {
            /* armed first: the signal satisfies it and sets the event */
            D3DKMT_WAITFORSYNCHRONIZATIONOBJECTFROMCPU w = { 0 };

            w.hDevice = c->f->device;
            w.ObjectCount = 1;
            w.ObjectHandleArray = &c->fence;
            w.FenceValueArray = &v;
            w.hAsyncEvent = c->event;
            if (c->f->wait_cpu(&w) || fence_signal(c->f, c->fence, v) ||
                WaitForSingleObject(c->event, WAIT_MS) != WAIT_OBJECT_0)
                return FALSE;
        } else if (fence_signal(c->f, c->fence, v) || fence_wait(c->f, c->fence, v, NULL)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* Two threads, two fences: `ping` is signaled by the timing thread, `pong`
 * by the partner, in rounds. */
struct pingpong {
    const struct fences *f;
    D3DKMT_HANDLE ping, pong;
    BOOL async;
    unsigned n;
    UINT64 base;
    HANDLE start, done;                  /* the partner's round of work */
    volatile LONG quit, failed;
    HANDLE ev_main, ev_partner;          /* async waits; Win32 ping-pong */
    BOOL raw;                            /* SetEvent / WaitForSingleObject only */
};

static DWORD WINAPI partner(void *arg)
{
    struct pingpong *p = arg;

    for (;;) {
        WaitForSingleObject(p->start, INFINITE);
        if (p->quit)
            return 0;
        for (UINT64 v = p->base + 1; v <= p->base + p->n; v++) {
            if (p->raw) {
                if (WaitForSingleObject(p->ev_partner, WAIT_MS) != WAIT_OBJECT_0 || !SetEvent(p->ev_main))
                    p->failed = 1;
            } else if (fence_wait(p->f, p->ping, v, p->async ? p->ev_partner : NULL) ||
                       fence_signal(p->f, p->pong, v)) {
                p->failed = 1;
            }
            if (p->failed)
                break;
        }
        SetEvent(p->done);
    }
}

static BOOL run_pingpong(void *arg, unsigned n, UINT64 base)
{
    struct pingpong *p = arg;

    p->n = n;
    p->base = base;
    SetEvent(p->start);
    for (UINT64 v = base + 1; v <= base + n && !p->failed; v++) {
        if (p->raw) {
            if (!SetEvent(p->ev_partner) || WaitForSingleObject(p->ev_main, WAIT_MS) != WAIT_OBJECT_0)
                p->failed = 1;
        } else if (fence_signal(p->f, p->ping, v) || fence_wait(p->f, p->pong, v, p->async ? p->ev_main : NULL)) {
            p->failed = 1;
        }
    }
    WaitForSingleObject(p->done, WAIT_MS);
    return !p->failed;
}

static double bench_pingpong(const struct fences *f, BOOL async, BOOL raw, unsigned n)
{
    struct pingpong p;
    HANDLE thread;
    double ns;

    memset(&p, 0, sizeof(p));
    p.f = f;
    p.async = async;
    p.raw = raw;
    p.ping = fence_new(f);
    p.pong = fence_new(f);
    p.start = CreateEventW(NULL, FALSE, FALSE, NULL);
    p.done = CreateEventW(NULL, FALSE, FALSE, NULL);
    p.ev_main = CreateEventW(NULL, FALSE, FALSE, NULL);
    p.ev_partner = CreateEventW(NULL, FALSE, FALSE, NULL);
    thread = CreateThread(NULL, 0, partner, &p, 0, NULL);
    ns = p.ping && p.pong && thread ? median_of_runs(run_pingpong, &p, n) : -1;
    p.quit = 1;
    SetEvent(p.start);
    if (thread) {
        WaitForSingleObject(thread, WAIT_MS);
        CloseHandle(thread);
    }
    CloseHandle(p.start);
    CloseHandle(p.done);
    CloseHandle(p.ev_main);
    CloseHandle(p.ev_partner);
    fence_free(f, p.ping);
    fence_free(f, p.pong);
    return ns;
}

/* SubmitCommand of [NOP, SIGNAL_FENCE v] and an async wait for v. */
struct submit_ctx {
    const struct fences *f;
    D3DKMT_HANDLE ctx, fence, cmdbuf;
    D3DGPU_VIRTUAL_ADDRESS cmd_va, fence_va;
    BYTE *cmds;
    HANDLE event;
};

static BOOL run_submit(void *arg, unsigned n, UINT64 base)
{
    struct submit_ctx *c = arg;
    KMT_SOFT_CMD_HEADER nop = { KMT_SOFT_OP_NOP, sizeof(nop) };
    KMT_SOFT_CMD_FENCE sig = { { KMT_SOFT_OP_SIGNAL_FENCE, sizeof(sig) }, c->fence_va, 0 };
    const UINT len = sizeof(nop) + sizeof(sig), slots = 4096 / 64;

    for (UINT64 v = base + 1; v <= base + n; v++) {
        D3DKMT_SUBMITCOMMAND sc = { 0 };
        UINT slot = (UINT)(v % slots);   /* the previous round completed: its slot is free */

        sig.Value = v;
        memcpy(c->cmds + slot * 64, &nop, sizeof(nop));
        memcpy(c->cmds + slot * 64 + sizeof(nop), &sig, sizeof(sig));
        sc.Commands = c->cmd_va + slot * 64;
        sc.CommandLength = len;
        sc.BroadcastContextCount = 1;
        sc.BroadcastContext[0] = c->ctx;
        if (c->f->submit(&sc) || fence_wait(c->f, c->fence, v, c->event))
            return FALSE;
    }
    return TRUE;
}

static double bench_submit(const struct fences *f, unsigned n)
{
    KMT_SOFT_ALLOCATION_DESC desc = { KMT_SOFT_ALLOCATION_MAGIC, KMT_SOFT_ALLOCATION_VERSION, 4096, 0, 0 };
    D3DKMT_CREATESYNCHRONIZATIONOBJECT2 cs = { 0 };
    D3DKMT_CREATECONTEXTVIRTUAL cv = { 0 };
    D3DDDI_ALLOCATIONINFO2 info = { 0 };
    D3DKMT_CREATEALLOCATION ca = { 0 };
    D3DKMT_LOCK2 lock = { 0 };
    struct submit_ctx c;
    double ns = -1;

    memset(&c, 0, sizeof(c));
    c.f = f;
    cv.hDevice = f->device;
    info.pPrivateDriverData = &desc;
    info.PrivateDriverDataSize = sizeof(desc);
    ca.hDevice = f->device;
    ca.NumAllocations = 1;
    ca.pAllocationInfo2 = &info;
    cs.hDevice = f->device;
    cs.Info.Type = D3DDDI_MONITORED_FENCE;
    if (f->create_context(&cv) || f->create_alloc2(&ca) || f->create_sync(&cs))
        return -1;
    c.ctx = cv.hContext;
    c.cmdbuf = info.hAllocation;
    c.cmd_va = info.GpuVirtualAddress;
    c.fence = cs.hSyncObject;
    c.fence_va = cs.Info.MonitoredFence.FenceValueGPUVirtualAddress;
    lock.hDevice = f->device;
    lock.hAllocation = c.cmdbuf;
    c.event = CreateEventW(NULL, FALSE, FALSE, NULL);
    if (!f->lock2(&lock) && (c.cmds = lock.pData))
        ns = median_of_runs(run_submit, &c, n);
    CloseHandle(c.event);
    {
        D3DKMT_DESTROYCONTEXT dc = { c.ctx };
        f->destroy_context(&dc);
    }
    fence_free(f, c.fence);
    return ns;                           /* the allocation dies with the device */
}

/* SetEvent, then the wait it satisfies: what the async round costs at
 * least under Wine, where both are wineserver requests. */
static BOOL run_set_wait(void *arg, unsigned n, UINT64 base)
{
    HANDLE event = arg;

    (void)base;
    for (unsigned i = 0; i < n; i++)
        if (!SetEvent(event) || WaitForSingleObject(event, WAIT_MS) != WAIT_OBJECT_0)
            return FALSE;
    return TRUE;
}

static void print_ratio(const char *what, double ns, double floor)
{
    if (ns >= 0 && floor > 0)
        printf("  %-56s %10.2f\n", what, ns / floor);
    else
        printf("  %-56s %10s\n", what, "failed");
}

static void print_ns(const char *what, double ns)
{
    if (ns >= 0)
        printf("  %-56s %10.0f\n", what, ns);
    else
        printf("  %-56s %10s\n", what, "failed");
}

static void fence_section(HMODULE kmtshim, D3DKMT_HANDLE adapter, unsigned calls)
{
    unsigned n1 = calls / 20 + 1, n2 = calls / 100 + 1, n3 = calls / 250 + 1;
    double async_one, async_pp, set_wait, win32_pp;
    struct one_thread one;
    struct fences f;
    HANDLE event;

    if (!fences_init(&f, kmtshim, adapter)) {
        printf("monitored fences: no device on kmtshim's adapter\n");
        return;
    }
    printf("\nmonitored fences through kmtshim.dll (software adapter), ns per round, median of %d runs:\n", RUNS);
    one.f = &f;
    one.fence = fence_new(&f);
    one.event = NULL;
    print_ns("SignalFromCpu + WaitFromCpu (satisfied), 1 thread", median_of_runs(run_signal_wait, &one, n1));
    /* a fresh fence: the rounds count their values from 1 again */
    fence_free(&f, one.fence);
    one.fence = fence_new(&f);
    one.event = CreateEventW(NULL, FALSE, FALSE, NULL);
    async_one = median_of_runs(run_signal_wait, &one, n1);
    print_ns("async WaitFromCpu + SignalFromCpu + WaitForSingleObject", async_one);
    CloseHandle(one.event);
    fence_free(&f, one.fence);
    print_ns("ping-pong, 2 threads, blocking WaitFromCpu", bench_pingpong(&f, FALSE, FALSE, n2));
    async_pp = bench_pingpong(&f, TRUE, FALSE, n2);
    print_ns("ping-pong, 2 threads, async event + WaitForSingleObject", async_pp);
    print_ns("SubmitCommand [NOP, SIGNAL_FENCE] + async wait (event pump)", bench_submit(&f, n3));
    event = CreateEventW(NULL, FALSE, FALSE, NULL);
    set_wait = median_of_runs(run_set_wait, event, n1);
    CloseHandle(event);
    print_ns("Win32 events only: SetEvent + WaitForSingleObject, 1 thread", set_wait);
    win32_pp = bench_pingpong(&f, FALSE, TRUE, n2);
    print_ns("Win32 events only: SetEvent/WaitForSingleObject ping-pong", win32_pp);
    printf("ratios to Wine's own events in this run:\n");
    print_ratio("async round, 1 thread / SetEvent + WaitForSingleObject", async_one, set_wait);
    print_ratio("async ping-pong / SetEvent/WaitForSingleObject ping-pong", async_pp, win32_pp);
    {
        D3DKMT_DESTROYDEVICE dd = { f.device };
        f.destroy_device(&dd);
    }
}

static const char usage[] =
    "Usage: bench_wine.exe [CALLS]\n"
    "Times D3DKMT calls under Wine through kmtshim.dll, the gdi32 proxy and Wine's\n"
    "builtin gdi32 in one process: CALLS no-op calls per run (default 1000000, at\n"
    "least 5), CALLS/5 CreateDevice+DestroyDevice pairs, then monitored fences.\n"
    "Run it with bench/wine/run-bench-wine.sh, which prepares the prefix.\n";

/* The one optional argument: a whole decimal count, else the usage and
 * exit 2 (a count of 0 would divide the times by zero). */
static unsigned parse_calls(int argc, char **argv)
{
    unsigned long n;
    char *end;

    if (argc < 2)
        return 1000000;
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage, stdout);
        exit(0);
    }
    n = strtoul(argv[1], &end, 10);
    if (argc > 2 || !*argv[1] || *end || argv[1][0] == '-' || n < 5 || n > 1000000000ul) {
        fprintf(stderr, "bench_wine.exe: bad arguments\n%s", usage);
        exit(2);
    }
    return (unsigned)n;
}

int main(int argc, char **argv)
{
    unsigned noop_n = parse_calls(argc, argv), pair_n = noop_n / 5;
    HMODULE gdi32 = LoadLibraryA("gdi32.dll"), orig = GetModuleHandleA("gdi32_orig.dll");
    HMODULE kmtshim = LoadLibraryA("kmtshim.dll");
    BOOL proxy = orig && GetProcAddress(gdi32, "D3DKMTCreateAllocation");
    struct side kmt, wine, kmt_proxy, wine_proxy;
    LARGE_INTEGER freq;

    QueryPerformanceFrequency(&freq);
    ticks_per_ns = freq.QuadPart / 1e9;
    if (!side_init(&kmt, "kmtshim.dll", kmtshim)) {
        printf("kmtshim.dll not loadable (WINEDLLPATH?)\n");
        return 1;
    }
    side_init(&wine, proxy ? "Wine's gdi32 (gdi32_orig.dll)" : "Wine's gdi32", proxy ? orig : gdi32);
    kmt.adapter = kmtshim_adapter(kmtshim);
    wine.adapter = wine_adapter(wine.module);

    printf("ns per call, best of 5 runs: %u no-op calls, %u CreateDevice+DestroyDevice pairs\n", noop_n, pair_n);
    printf("%-36s %16s %16s %16s\n", "path", "CreateDevice(0)", "CloseAdapter(0)", "Create+Destroy");
    row(&kmt, noop_n, pair_n, TRUE);
    row(&wine, noop_n, pair_n, TRUE);
    if (proxy) {
        /* zero handles go to kmtshim, Wine's handles to Wine */
        side_init(&kmt_proxy, "gdi32 proxy -> kmtshim", gdi32);
        kmt_proxy.adapter = kmt.adapter;
        side_init(&wine_proxy, "gdi32 proxy -> Wine (pass-through)", gdi32);
        wine_proxy.adapter = wine.adapter;
        row(&kmt_proxy, noop_n, pair_n, TRUE);
        row(&wine_proxy, noop_n, pair_n, FALSE);
    } else {
        printf("(no gdi32 proxy in this process: run with kmtshim-prefix --proxy-exe bench_wine.exe for its rows)\n");
    }
    fence_section(kmtshim, kmt.adapter, noop_n);
    return 0;
}
