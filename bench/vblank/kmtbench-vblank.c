/*
 * kmtbench-vblank: how evenly D3DKMTWaitForVerticalBlankEvent returns on
 * the software adapter's virtual 60 Hz output, next to the floor the
 * machine allows: clock_nanosleep(TIMER_ABSTIME) to the same absolute
 * 60 Hz deadlines of CLOCK_MONOTONIC.  Both report the intervals between
 * successive returns (mean, standard deviation, min, max, p99, in ms); the
 * ideal is 16.667 ms with no spread.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench_util.h"
#include "kmtshim/d3dkmthk.h"

#define FRAME_NS3 50000000.0             /* 1/60 s in thirds of a ns */

struct stats {
    double mean, stddev, min, max, p99;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Intervals between successive times t[0..n), in ms. */
static struct stats interval_stats(const double *t, unsigned n)
{
    double *d = malloc(sizeof(*d) * n), sum = 0, sq = 0;
    struct stats s;
    unsigned m = n - 1;

    if (!d)
        bench_die("malloc", 0);
    for (unsigned i = 0; i < m; i++) {
        d[i] = (t[i + 1] - t[i]) / 1e6;
        sum += d[i];
    }
    s.mean = sum / m;
    for (unsigned i = 0; i < m; i++)
        sq += (d[i] - s.mean) * (d[i] - s.mean);
    s.stddev = sqrt(sq / m);
    qsort(d, m, sizeof(*d), cmp_double);
    s.min = d[0];
    s.max = d[m - 1];
    s.p99 = d[(unsigned)ceil(0.99 * m) - 1];
    free(d);
    return s;
}

static void measure_vblank(D3DKMT_HANDLE adapter, double *t, unsigned n)
{
    D3DKMT_WAITFORVERTICALBLANKEVENT w = { adapter, 0, 0 };
    NTSTATUS status;

    for (unsigned i = 0; i < n; i++) {
        if ((status = D3DKMTWaitForVerticalBlankEvent(&w)))
            bench_die("D3DKMTWaitForVerticalBlankEvent", status);
        t[i] = bench_now_ns();
    }
}

static void measure_nanosleep(double *t, unsigned n)
{
    unsigned long long k = (unsigned long long)(bench_now_ns() * 3 / FRAME_NS3) + 1;

    for (unsigned i = 0; i < n; i++, k++) {
        unsigned long long ns = k * 50000000ull / 3;
        struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
            ;
        t[i] = bench_now_ns();
    }
}

static void print(const struct bench_options *o, unsigned frames, const char *const names[2],
                  const struct stats s[2])
{
    if (o->json) {
        printf("[");
        for (unsigned i = 0; i < 2; i++)
            printf("%s{\"name\": \"%s\", \"frames\": %u, \"mean_ms\": %.4f, \"stddev_ms\": %.4f, "
                   "\"min_ms\": %.4f, \"max_ms\": %.4f, \"p99_ms\": %.4f}", i ? ", " : "", names[i], frames,
                   s[i].mean, s[i].stddev, s[i].min, s[i].max, s[i].p99);
        printf("]\n");
        return;
    }
    if (o->markdown) {
        printf("Intervals between successive returns over %u frames of the soft adapter's 60 Hz "
               "output (ideal: 16.667 ms).\n\n", frames);
        printf("| wait | mean ms | stddev ms | min ms | max ms | p99 ms |\n");
        printf("|---|---:|---:|---:|---:|---:|\n");
        for (unsigned i = 0; i < 2; i++)
            printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", names[i], s[i].mean, s[i].stddev,
                   s[i].min, s[i].max, s[i].p99);
        return;
    }
    printf("%u frames at 60 Hz (ideal interval 16.667 ms)\n", frames);
    printf("%-36s %9s %9s %9s %9s %9s\n", "wait", "mean ms", "stddev", "min", "max", "p99");
    for (unsigned i = 0; i < 2; i++)
        printf("%-36s %9.3f %9.3f %9.3f %9.3f %9.3f\n", names[i], s[i].mean, s[i].stddev, s[i].min,
               s[i].max, s[i].p99);
}

int main(int argc, char **argv)
{
    static const char *const names[2] = {
        "D3DKMTWaitForVerticalBlankEvent", "clock_nanosleep(TIMER_ABSTIME)",
    };
    struct bench_options o = { .reps = 1, .scale = 1.0 };
    D3DKMT_ADAPTERINFO info[16];
    D3DKMT_ENUMADAPTERS2 e = { 16, info };
    struct stats s[2];
    unsigned frames;
    double *t;
    NTSTATUS status;

    bench_parse_options(argc, argv,
                        "The jitter of D3DKMTWaitForVerticalBlankEvent on the software adapter's\n"
                        "virtual 60 Hz output (600 frames, --quick 60), next to clock_nanosleep to\n"
                        "the same absolute deadlines.  --reps is accepted and ignored: every frame\n"
                        "is a sample.", &o);
    frames = bench_scaled(&o, 600) + 1;
    if (frames < 3)
        frames = 3;
    setenv("KMTSHIM_MINIPORT", "soft", 1);
    if (!getenv("KMTSHIM_SOFT_SOURCES"))
        setenv("KMTSHIM_SOFT_SOURCES", "1", 1);
    if ((status = D3DKMTEnumAdapters2(&e)) || !e.NumAdapters)
        bench_die("D3DKMTEnumAdapters2", status);
    if (!(t = malloc(sizeof(*t) * frames)))
        bench_die("malloc", 0);
    measure_vblank(info[0].hAdapter, t, frames);
    s[0] = interval_stats(t, frames);
    measure_nanosleep(t, frames);
    s[1] = interval_stats(t, frames);
    free(t);
    print(&o, frames - 1, names, s);
    return 0;
}
