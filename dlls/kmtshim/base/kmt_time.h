/*
 * Time for the core and the miniports: timeouts run on CLOCK_MONOTONIC, so
 * a wall-clock change does not end a wait early or late.  Condition
 * variables that take deadlines are made with this clock.
 */
#ifndef KMTSHIM_BASE_TIME_H
#define KMTSHIM_BASE_TIME_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t kmt_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* QueryPerformanceCounter's clock, as Wine's NtQueryPerformanceCounter reads
 * it: CLOCK_MONOTONIC_RAW in 100 ns units (KMT_QPC_FREQUENCY per second).
 * GPU clock calibration gives CPU time on this clock. */
#define KMT_QPC_FREQUENCY 10000000ull

static inline uint64_t kmt_qpc_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * KMT_QPC_FREQUENCY + (uint64_t)ts.tv_nsec / 100;
}

static inline struct timespec kmt_timespec_of(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

    return ts;
}

/* Sleeps the whole time, through signals (the miniports' GPU delays and
 * test stalls). */
static inline void kmt_sleep_ns(uint64_t ns)
{
    struct timespec ts = kmt_timespec_of(ns);

    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

/* The absolute deadline `ms` milliseconds from now. */
static inline struct timespec kmt_deadline_after(uint64_t ms)
{
    return kmt_timespec_of(kmt_now_ns() + ms * 1000000ull);
}

static inline void kmt_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

#endif
