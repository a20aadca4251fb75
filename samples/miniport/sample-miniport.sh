#!/bin/sh
# TAP: the sample plugin miniport, loaded by path, runs the native
# lifecycle sample and shows up in kmtinfo.
b=${KMTSHIM_TEST_BUILDDIR:-.}
plugin=$b/samples/miniport/.libs/sysmem_miniport.so
echo "1..3"
if [ ! -f "$plugin" ]; then
    for i in 1 2 3; do echo "not ok $i - $plugin was not built"; done
    exit 1
fi
out=$(KMTSHIM_MINIPORT=$plugin "$b/tools/kmtinfo/kmtinfo" 2>&1)
case "$out" in
    *"sysmem sample miniport"*"miniport ......... sysmem"*) echo "ok 1 - kmtinfo lists the plugin's adapter" ;;
    *) echo "not ok 1 - kmtinfo lists the plugin's adapter"; echo "$out" | sed 's/^/# /' ;;
esac
json=$(KMTSHIM_MINIPORT=$plugin "$b/tools/kmtinfo/kmtinfo" --json 2>&1)
case "$json" in
    *'"miniport": "sysmem"'*'"location": "sysmem0"'*) echo "ok 2 - kmtinfo --json names the miniport and its device" ;;
    *) echo "not ok 2 - kmtinfo --json names the miniport and its device"; echo "$json" | sed 's/^/# /' ;;
esac
life=$(KMTSHIM_MINIPORT=$plugin "$b/samples/lifecycle/lifecycle" 2>&1)
case "$life" in
    *"lifecycle: all steps succeeded"*) echo "ok 3 - the lifecycle sample runs on the plugin" ;;
    *) echo "not ok 3 - the lifecycle sample runs on the plugin"; echo "$life" | sed 's/^/# /' ;;
esac
