# Unit tests of the public API: the core's locks, handles, adapters, queries, allocation rules, locks, races.

KMT_API_TESTS = \
	tests/unit/test_kmt_lock \
	tests/unit/test_kmt_rcu \
	tests/unit/test_debug \
	tests/unit/test_hmgr \
	tests/unit/test_adapter \
	tests/unit/test_query \
	tests/unit/test_query_ext \
	tests/unit/test_clock_calibration \
	tests/unit/test_allocation \
	tests/unit/test_lock \
	tests/unit/test_vidpn \
	tests/unit/test_vblank \
	tests/unit/test_race \
	tests/unit/test_abi

check_PROGRAMS += $(KMT_API_TESTS)
TESTS += $(KMT_API_TESTS)

tests_unit_test_kmt_lock_SOURCES = tests/unit/test_kmt_lock.c
tests_unit_test_kmt_lock_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_kmt_lock_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_kmt_rcu_SOURCES = tests/unit/test_kmt_rcu.c
tests_unit_test_kmt_rcu_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_kmt_rcu_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_debug_SOURCES = tests/unit/test_debug.c
tests_unit_test_debug_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_debug_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_hmgr_SOURCES = tests/unit/test_hmgr.c
tests_unit_test_hmgr_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_hmgr_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_adapter_SOURCES = tests/unit/test_adapter.c
tests_unit_test_adapter_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_adapter_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_clock_calibration_SOURCES = tests/unit/test_clock_calibration.c
tests_unit_test_clock_calibration_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_clock_calibration_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_query_SOURCES = tests/unit/test_query.c
tests_unit_test_query_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_query_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_query_ext_SOURCES = tests/unit/test_query_ext.c
tests_unit_test_query_ext_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_query_ext_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_allocation_SOURCES = tests/unit/test_allocation.c
tests_unit_test_allocation_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_allocation_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_lock_SOURCES = tests/unit/test_lock.c
tests_unit_test_lock_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_lock_LDADD = $(KMT_UNIT_LDADD)
tests_unit_test_vidpn_SOURCES = tests/unit/test_vidpn.c
tests_unit_test_vidpn_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_vidpn_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_vblank_SOURCES = tests/unit/test_vblank.c
tests_unit_test_vblank_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_vblank_LDADD = $(KMT_UNIT_LDADD)

tests_unit_test_race_SOURCES = tests/unit/test_race.c
tests_unit_test_race_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_race_LDADD = $(KMT_UNIT_LDADD)

# test_abi also loads the installed-form library (.libs/libkmtshim.so) to
# check which symbols it exports.
tests_unit_test_abi_SOURCES = tests/unit/test_abi.c
tests_unit_test_abi_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_abi_LDADD = $(KMT_UNIT_LDADD)
EXTRA_tests_unit_test_abi_DEPENDENCIES = libkmtshim.la

# The i386 layouts under both 32-bit compilers (i686 mingw-w64, gcc -m32);
# each part skips where its compiler is missing.
EXTRA_DIST += tests/unit/abi-i386.sh tests/unit/abi-common.sh
TESTS += tests/unit/abi-i386.sh

# Every public header must also compile for Windows (mingw-w64), where the
# same layout assertions run against the toolchain's own windows.h types.
EXTRA_DIST += tests/unit/abi-mingw.sh
if HAVE_WINE
TESTS += tests/unit/abi-mingw.sh
AM_TESTS_ENVIRONMENT += KMT_MINGW_CC='$(MINGW_CC)'; export KMT_MINGW_CC;
endif
