/*
 * Pinning test threads to CPUs (cpu_pin.h).
 */
#define _GNU_SOURCE
#include <check.h>
#include <pthread.h>
#include <sched.h>

#include "cpu_pin.h"

int kmt_test_first_cpus(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;

    ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
    for (int i = 0; i < CPU_SETSIZE && n < max; i++)
        if (CPU_ISSET(i, &set))
            cpus[n++] = i;
    return n;
}

int kmt_test_pin_to(int cpu)
{
    cpu_set_t one;

    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}

void kmt_test_pin(int cpu)
{
    ck_assert_int_eq(kmt_test_pin_to(cpu), 0);
}

void kmt_test_unpin(const int *cpus, int count)
{
    cpu_set_t all;

    CPU_ZERO(&all);
    for (int i = 0; i < count; i++)
        CPU_SET(cpus[i], &all);
    ck_assert_int_eq(pthread_setaffinity_np(pthread_self(), sizeof(all), &all), 0);
}
