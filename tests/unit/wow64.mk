# The new-WoW64 conversion of the Linux half (dlls/kmtshim/wine/unix/wow64*),
# natively: test_wow64 links the Linux half's sources with the core and
# drives the wow64 table with i386-layout descriptors; wow64-layouts.sh
# checks the layout tables against both 32-bit compilers.  Neither needs
# Wine.  64-bit builds only, as the wow64 table.
EXTRA_DIST += tests/unit/wow64-layouts.sh
if KMT_LP64
KMT_WOW64_UNIX = \
	dlls/kmtshim/wine/unix/unixlib.c \
	dlls/kmtshim/wine/unix/entries_gen.c \
	dlls/kmtshim/wine/unix/events.c \
	dlls/kmtshim/wine/unix/custom.c \
	dlls/kmtshim/wine/unix/nt_handles.c \
	dlls/kmtshim/wine/unix/wow64.c \
	dlls/kmtshim/wine/unix/wow64_convert.c \
	dlls/kmtshim/wine/unix/wow64_layouts.c

KMT_UNIT_TESTS += tests/unit/test_wow64
tests_unit_test_wow64_SOURCES = tests/unit/test_wow64.c $(KMT_WOW64_UNIX)
tests_unit_test_wow64_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/dlls/kmtshim/wine -I$(srcdir)/dlls/kmtshim/wine/unix
tests_unit_test_wow64_CFLAGS = $(KMT_UNIT_CFLAGS)
tests_unit_test_wow64_LDADD = $(KMT_UNIT_LDADD)
TESTS += tests/unit/wow64-layouts.sh
endif
