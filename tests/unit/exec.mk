# Unit tests of execution on the software adapter: contexts, context
# allocations, submission, sync objects, CPU waits, races.

KMT_EXEC_TESTS = \
	tests/unit/test_context \
	tests/unit/test_context_alloc \
	tests/unit/test_submit \
	tests/unit/test_statistics \
	tests/unit/test_statistics2 \
	tests/unit/test_present \
	tests/unit/test_syncobj \
	tests/unit/test_fence_wait \
	tests/unit/test_exec_race \
	tests/unit/test_fence_ddi \
	tests/unit/test_tdr \
	tests/unit/test_fork \
	tests/unit/test_threads \
	tests/unit/test_chaos

check_PROGRAMS += $(KMT_EXEC_TESTS) tests/unit/chaos_peer
TESTS += $(KMT_EXEC_TESTS)

KMT_EXEC_UTIL = tests/unit/exec_util.c tests/unit/exec_util.h

tests_unit_test_context_SOURCES = tests/unit/test_context.c $(KMT_EXEC_UTIL)
tests_unit_test_context_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_context_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_context_alloc_SOURCES = tests/unit/test_context_alloc.c $(KMT_EXEC_UTIL)
tests_unit_test_context_alloc_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_context_alloc_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_fork_SOURCES = tests/unit/test_fork.c $(KMT_EXEC_UTIL)
tests_unit_test_fork_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_fork_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_threads_SOURCES = tests/unit/test_threads.c $(KMT_EXEC_UTIL)
tests_unit_test_threads_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_threads_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_submit_SOURCES = tests/unit/test_submit.c $(KMT_EXEC_UTIL)
tests_unit_test_submit_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_submit_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_syncobj_SOURCES = tests/unit/test_syncobj.c $(KMT_EXEC_UTIL)
tests_unit_test_syncobj_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_syncobj_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_fence_wait_SOURCES = tests/unit/test_fence_wait.c $(KMT_EXEC_UTIL)
tests_unit_test_fence_wait_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_fence_wait_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_exec_race_SOURCES = tests/unit/test_exec_race.c $(KMT_EXEC_UTIL)
tests_unit_test_exec_race_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_exec_race_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_fence_ddi_SOURCES = tests/unit/test_fence_ddi.c $(KMT_EXEC_UTIL)
tests_unit_test_fence_ddi_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_fence_ddi_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_tdr_SOURCES = tests/unit/test_tdr.c $(KMT_EXEC_UTIL)
tests_unit_test_tdr_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_tdr_LDADD = $(KMT_UNIT_LDADD)

# Randomized threads over one shared pool of handles (seed: KMT_CHAOS_SEED).
tests_unit_test_chaos_SOURCES = tests/unit/test_chaos.c tests/unit/chaos.c tests/unit/chaos.h \
	tests/unit/chaos_share.c tests/unit/chaos_share.h $(KMT_EXEC_UTIL)
tests_unit_test_chaos_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_chaos_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_statistics_SOURCES = tests/unit/test_statistics.c $(KMT_EXEC_UTIL)
tests_unit_test_statistics_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_statistics_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_present_SOURCES = tests/unit/test_present.c $(KMT_EXEC_UTIL)
tests_unit_test_present_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_present_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_statistics2_SOURCES = tests/unit/test_statistics2.c $(KMT_EXEC_UTIL)
tests_unit_test_statistics2_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_statistics2_LDADD = $(KMT_UNIT_LDADD)

# the peer process of the chaos tests' sharing (tests/unit/chaos_share.h)
tests_unit_chaos_peer_SOURCES = tests/unit/chaos_peer.c tests/unit/chaos_share.h
tests_unit_chaos_peer_LDADD = libkmtcore.la $(PTHREAD_LIBS)
