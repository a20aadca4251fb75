# The 32-bit half of the Wine side, made the way Wine's --enable-archs
# makes its i386 half: a nested configure and build of this tree for
# i686-linux-gnu in wine32/ (gcc -m32 and the i386 libdrm for kmtshim.so and
# the core it holds, i686-w64-mingw32 for the PE files, Wine's i386
# gdi32.dll for the proxy).  Only the Wine parts are built there; they are
# staged here beside the 64-bit ones and installed from here:
#   dlls/kmtshim/wine/tree/i386-windows/kmtshim.dll  -> $(pkglibdir)/i386-windows/
#   dlls/kmtshim/wine/tree/i386-unix/kmtshim.so      -> $(pkglibdir)/i386-unix/
#   dlls/kmtshim/wine/tree/i386-unix/kmtshim-core.so -> $(pkglibdir)/i386-unix/
#   dlls/gdi32/proxy/i386/gdi32.dll                  -> $(pkglibdir)/proxy/i386/
#   samples/win/i386/kmtdemo.exe                     -> $(pkglibdir)/samples/i386/
#   bench/wine/i386/bench_wine.exe                   -> $(pkglibdir)/bench/i386/
# The 32-bit test programs stay in wine32/tests/wine, where
# tests/wine/run-wine-tests32.sh runs them.  The nested build needs a
# source tree that is not configured in place (build in a subdirectory).

EXTRA_DIST += dlls/kmtshim/wine/wine32.mk

if HAVE_WINE32
KMT_WINE32_DIR = wine32

# NESTED-PATH:STAGED-PATH
KMT_WINE32_PAIRS = \
	dlls/kmtshim/wine/tree/i386-windows/kmtshim.dll:dlls/kmtshim/wine/tree/i386-windows/kmtshim.dll \
	dlls/kmtshim/wine/tree/i386-unix/kmtshim.so:dlls/kmtshim/wine/tree/i386-unix/kmtshim.so \
	dlls/kmtshim/wine/tree/i386-unix/kmtshim-core.so:dlls/kmtshim/wine/tree/i386-unix/kmtshim-core.so \
	dlls/gdi32/proxy/gdi32.dll:dlls/gdi32/proxy/i386/gdi32.dll \
	samples/win/kmtdemo.exe:samples/win/i386/kmtdemo.exe \
	bench/wine/bench_wine.exe:bench/wine/i386/bench_wine.exe
KMT_WINE32_STAGED = $(KMT_WINE_TREE)/i386-windows/kmtshim.dll $(KMT_WINE_TREE)/i386-unix/kmtshim.so \
	$(KMT_WINE_TREE)/i386-unix/kmtshim-core.so \
	$(KMT_PROXY_OUT)/proxy/i386/gdi32.dll samples/win/i386/kmtdemo.exe bench/wine/i386/bench_wine.exe
KMT_WINE32_TESTS = tests/wine/test_kmtshim.exe tests/wine/test_proxy.exe tests/wine/test_proxy_static.exe \
	tests/wine/test_proxy_user32.exe tests/wine/selftest.exe tests/wine/test_desc_probe.exe

$(KMT_WINE32_DIR)/config.status: config.status
	$(AM_V_GEN)$(MKDIR_P) $(KMT_WINE32_DIR) && cd $(KMT_WINE32_DIR) && \
	$(abs_top_srcdir)/configure -q --build=$(build) --host=i686-linux-gnu CC='$(CC) -m32' \
		PKG_CONFIG='$(PKG_CONFIG)' PKG_CONFIG_LIBDIR='$(WINE32_PKG_CONFIG_LIBDIR)' \
		--with-wine-arch=i386 --enable-wine --with-wine-dlldir='$(WINE32_DLLDIR)' --disable-wine32 \
		--disable-tests --prefix='$(prefix)' --libdir='$(libdir)' && touch config.status

# The nested make decides what is out of date; the copies change only when
# a file did.
kmt-wine32: $(KMT_WINE32_DIR)/config.status
	$(AM_V_at)$(MAKE) -C $(KMT_WINE32_DIR) $(foreach p,$(KMT_WINE32_PAIRS),$(firstword $(subst :, ,$(p))))
	$(AM_V_at)for p in $(KMT_WINE32_PAIRS); do \
	    from=$(KMT_WINE32_DIR)/$${p%%:*} to=$${p#*:}; \
	    cmp -s "$$from" "$$to" || { $(MKDIR_P) "$$(dirname "$$to")" && cp "$$from" "$$to"; } || exit 1; \
	done
kmt-wine32-tests: kmt-wine32
	$(AM_V_at)$(MAKE) -C $(KMT_WINE32_DIR) $(KMT_WINE32_TESTS)
$(KMT_WINE32_STAGED): kmt-wine32
	@:

kmtshimwin32dir = $(pkglibdir)/i386-windows
kmtshimwin32_DATA = $(KMT_WINE_TREE)/i386-windows/kmtshim.dll
kmtshimunix32dir = $(pkglibdir)/i386-unix
kmtshimunix32_DATA = $(KMT_WINE_TREE)/i386-unix/kmtshim.so $(KMT_WINE_TREE)/i386-unix/kmtshim-core.so
kmtshimproxy32dir = $(pkglibdir)/proxy/i386
kmtshimproxy32_DATA = $(KMT_PROXY_OUT)/proxy/i386/gdi32.dll
kmtshimsample32dir = $(pkglibdir)/samples/i386
kmtshimsample32_DATA = samples/win/i386/kmtdemo.exe
kmtshimbench32dir = $(pkglibdir)/bench/i386
kmtshimbench32_DATA = bench/wine/i386/bench_wine.exe

# (clean-local in Makefile.am removes wine32/)
CLEANFILES += $(KMT_WINE32_STAGED)
endif HAVE_WINE32
