# Sourced by tests/wine/run-wine-tests32.sh and scripts/demo-wine: which
# prefix this Wine starts 32-bit programs in, told by its loaders.
#
# wine32_prefix_arch WINE: "win32" where a separate i386 loader, wine,
# sits beside the 64-bit one (classic loaders, as Debian packages Wine up
# to 10.0: Debian 13's 10.0 starts no 32-bit program in a 64-bit prefix,
# and every classic Wine runs them in a 32-bit one); "win64" where one
# loader runs both (new WoW64: 32-bit programs in a 64-bit prefix).
wine32_prefix_arch() {
    _w32_loader=$(dirname "$1")/wine
    # the ELF class byte: 01 is a 32-bit program
    if [ -f "$_w32_loader" ] &&
       [ "$(readlink -f "$_w32_loader")" != "$(readlink -f "$1")" ] &&
       [ "$(od -An -tx1 -j4 -N1 "$_w32_loader" 2>/dev/null | tr -d ' ')" = 01 ]; then
        echo win32
    else
        echo win64
    fi
}
