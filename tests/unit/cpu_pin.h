/*
 * Pinning test threads to CPUs, for rows whose behaviour depends on where
 * the other side runs (looks before sleeping: dxgkrnl/look.h).
 */
#ifndef KMTSHIM_TEST_CPU_PIN_H
#define KMTSHIM_TEST_CPU_PIN_H

/* The first `max` CPUs this process may run on, in cpus; how many. */
int kmt_test_first_cpus(int *cpus, int max);
/* Pins the calling thread to `cpu`; 0, or an errno. */
int kmt_test_pin_to(int cpu);
/* The same, asserted. */
void kmt_test_pin(int cpu);
/* Lets the calling thread run on any of the count CPUs in cpus again. */
void kmt_test_unpin(const int *cpus, int count);

#endif
