# Unit tests of the DDI contract seen from the recording miniport, destroy rules, cascade, loader.

include $(srcdir)/tests/miniports/Makefile.inc

KMT_CONTRACT_TESTS = \
	tests/unit/test_ddi_contract \
	tests/unit/test_ddi_gateway \
	tests/unit/test_destroy \
	tests/unit/test_cascade \
	tests/unit/test_loader \
	tests/unit/test_display_open

check_PROGRAMS += $(KMT_CONTRACT_TESTS)
TESTS += $(KMT_CONTRACT_TESTS)

KMT_CONTRACT_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/miniports/record -I$(top_srcdir)/tests/unit
KMT_CONTRACT_LDADD = tests/unit/libcontract.la tests/miniports/librecord.la $(KMT_UNIT_LDADD)

check_LTLIBRARIES += tests/unit/libcontract.la
tests_unit_libcontract_la_SOURCES = tests/unit/contract_util.c tests/unit/contract_util.h
tests_unit_libcontract_la_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_libcontract_la_CFLAGS = $(KMT_UNIT_CFLAGS)

tests_unit_test_ddi_contract_SOURCES = tests/unit/test_ddi_contract.c
tests_unit_test_ddi_contract_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_test_ddi_contract_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_ddi_contract_LDADD = $(KMT_CONTRACT_LDADD)

tests_unit_test_ddi_gateway_SOURCES = tests/unit/test_ddi_gateway.c
tests_unit_test_ddi_gateway_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_test_ddi_gateway_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_ddi_gateway_LDADD = $(KMT_CONTRACT_LDADD)

tests_unit_test_destroy_SOURCES = tests/unit/test_destroy.c
tests_unit_test_destroy_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_test_destroy_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_destroy_LDADD = $(KMT_CONTRACT_LDADD)

tests_unit_test_cascade_SOURCES = tests/unit/test_cascade.c
tests_unit_test_cascade_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_test_cascade_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_cascade_LDADD = $(KMT_CONTRACT_LDADD)

tests_unit_test_loader_SOURCES = tests/unit/test_loader.c
tests_unit_test_loader_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_test_loader_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_loader_LDADD = $(KMT_CONTRACT_LDADD)

tests_unit_test_display_open_SOURCES = tests/unit/test_display_open.c
tests_unit_test_display_open_CPPFLAGS = $(KMT_CONTRACT_CPPFLAGS)
tests_unit_test_display_open_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_display_open_LDADD = $(KMT_CONTRACT_LDADD)
