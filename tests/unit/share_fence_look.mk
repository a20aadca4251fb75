# A blocking wait on a shared fence looks at the value before it sleeps
# when the last signal came from another CPU (tests/unit/test_share_fence_look.c).

# Pinning threads to CPUs, for this test and test_keyed_mutex_look.
KMT_CPU_PIN = tests/unit/cpu_pin.c tests/unit/cpu_pin.h

check_PROGRAMS += tests/unit/test_share_fence_look
TESTS += tests/unit/test_share_fence_look

tests_unit_test_share_fence_look_SOURCES = tests/unit/test_share_fence_look.c $(KMT_EXEC_UTIL) \
	$(KMT_SHARED_STATE_PROBE) $(KMT_CPU_PIN)
tests_unit_test_share_fence_look_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_share_fence_look_LDADD = $(KMT_UNIT_LDADD)
