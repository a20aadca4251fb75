#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus (tests/fuzz/corpus/): programs that do
what a driver does (open, create, lock, submit, signal, wait, destroy) and
then the misuses the rules are about.  Each byte follows the harness's
reading order (fuzz_steps_*.c); `python3 make_corpus.py DIR` rewrites them."""
import os
import struct
import sys

STEPS = ["enum", "open", "close", "qai", "qvm", "create_device", "destroy_device", "state", "escape",
         "create_alloc", "destroy_alloc", "lock", "unlock", "create_ctx", "destroy_ctx", "submit", "render",
         "create_sync", "destroy_sync", "signal_gpu", "wait_gpu", "signal_cpu", "wait_cpu",
         "create_device2", "create_alloc2", "create_ctx2", "create_sync2", "open2", "shutdown", "bad_desc"]
BAD_DESC_CALLS, BAD_DESC_POINTERS = 36, 7
ADAPTER, DEVICE, RESOURCE, ALLOC, CTX, SYNC = range(6)


class Prog:
    def __init__(self):
        self.b = bytearray()
        self.live = {k: [] for k in range(6)}
        self.n = 0

    def u8(self, *v):
        self.b += bytes(v)

    def u32(self, v):
        self.b += struct.pack("<I", v & 0xffffffff)

    def step(self, name):
        self.u8(STEPS.index(name))

    def new(self, kind):
        self.n += 1
        self.live[kind].append(self.n)
        return self.n

    def handle(self, kind, k=-1):      # a live object: its index among the live ones
        self.u8(0, k % max(1, len(self.live[kind])))

    def stale(self, kind):             # of that kind, perhaps destroyed
        self.u8(5, 0)

    def garbage(self):
        self.u8(7, 1)
        self.u32(0xdeadbeef)

    def kill(self, kind, k=-1):
        if self.live[kind]:
            self.live[kind].pop(k)

    # ---- steps
    def open(self):
        self.step("open"); self.u8(1, 0); self.new(ADAPTER)

    def device(self):
        self.step("create_device"); self.handle(ADAPTER); self.u8(0); self.new(DEVICE)

    def alloc(self, n=1, v2=True, resource=False, size=4, existing=False, standard=False, dev=-1):
        flags = (1 if resource else 0) | (0x20 if existing else 0) | (0x10000 if standard else 0)
        self.step("create_alloc"); self.u8(1 if v2 else 0, 1); self.u32(flags)
        self.handle(DEVICE, dev); self.u8(1)
        self.u8(1, 3, n - 1)            # fuzz_count: 1..4
        self.u8(2)                      # the info array
        self.u8(1)                      # no runtime data
        if standard:
            self.u8(2, 1, 1, 0, 1, 1)
        else:
            self.u8(1)
        for _ in range(n):
            if standard:                # no driver data: size 0
                self.u8(size, 0, 1, 0)
            else:
                self.u8(size, 3, 1)
            if existing or standard:
                self.u8(2)
            self.u8(1, 0)
        if resource:
            self.new(RESOURCE)
        for _ in range(n):
            self.new(ALLOC)

    def lock(self, k=-1, data=b"kmtshim-fuzz-16b"):
        self.step("lock"); self.handle(DEVICE); self.handle(ALLOC, k); self.u8(1, 1); self.b += data

    def unlock(self, k=-1):
        self.step("unlock"); self.handle(DEVICE); self.u8(1); self.handle(ALLOC, k)

    def context(self, virtual=False):
        self.step("create_ctx"); self.handle(DEVICE); self.u8(1, 1, 0, 1, 0, 1 if virtual else 0)
        self.new(CTX)

    def sync(self, type_=5, value=0):
        self.step("create_sync"); self.handle(DEVICE); self.u8(1, type_, 0)
        if type_ == 5:
            self.u8(2, value, 1)
        elif type_ == 4:
            self.u8(2, 0)
        else:
            self.u8(1, value)
        self.new(SYNC)

    def commands(self, cmds):
        for c in cmds:
            self.u8(1)
            if c == "fill":
                self.u8(1, 2, 0, 0, 16); self.u32(0x12345678)
            elif c == "signal":
                self.u8(3, 1, 0, 2, 1)
            elif c == "write":
                self.u8(6, 2, 0, 8, 2, 7)
            elif c == "nop":
                self.u8(0)
            elif c == "wait":
                self.u8(4, 1, 0, 2, 9)
            elif c == "delay":
                self.u8(5, 10)
            elif c == "bad":
                self.u8(7); self.u32(99); self.u8(12)
        self.u8(0)

    def submit(self, cmds=("fill", "signal"), alloc=0):
        self.step("submit"); self.u8(3, 0, 1, alloc); self.commands(cmds)
        self.u8(1, 0); self.handle(CTX); self.u8(1, 1)

    def render(self, cmds=("nop",), nalloc=0):
        self.step("render"); self.u8(0); self.commands(cmds)
        self.u8(nalloc)
        for _ in range(nalloc):
            self.handle(ALLOC); self.u8(0)
        self.u8(1, 1, 0, 1, 0, 1, 1)
        self.u8(1, 1, 1, 1, 1, 1, 1, 0, 1, 1)

    def signal_gpu(self, n=1, variant=2, value=1):
        self.step("signal_gpu"); self.handle(CTX); self.u8(3, n - 1, 0, variant)
        if variant == 2:
            self.u8(2)
            for i in range(n):
                self.handle(SYNC, i - n)
            self.u8(2)
            for _ in range(min(n, 4)):
                self.u8(2, value)
        else:
            for i in range(n):
                self.handle(SYNC, i - n)
            if variant == 1:
                self.u8(1, 2, value)

    def wait_gpu(self, n=1, value=1, variant=2):
        self.step("wait_gpu"); self.handle(CTX); self.u8(3, n - 1, variant)
        if variant == 2:
            self.u8(2)
        for i in range(n):
            self.handle(SYNC, i - n)
        if variant == 2:
            self.u8(0, 2)
            for _ in range(min(n, 4)):
                self.u8(2, value)
        elif variant == 1:
            self.u8(2, value)

    def signal_cpu(self, value=1):
        self.step("signal_cpu"); self.handle(DEVICE); self.u8(3, 0, 2); self.handle(SYNC)
        self.u8(2, 2, value, 0)

    def wait_cpu(self, value=1, event=False):
        self.step("wait_cpu"); self.handle(DEVICE); self.u8(3, 0, 2); self.handle(SYNC)
        self.u8(2, 2, value)
        if event:
            self.u8(2, 0, 0)
        else:
            self.u8(0, 0, 1)

    def destroy(self, what, kind, k=-1, how=None):
        self.step(what)
        if how == "stale":
            self.stale(kind)
        elif how == "garbage":
            self.garbage()
        else:
            self.handle(kind, k)
            self.kill(kind, k)

    def destroy_allocs(self, n=1, v2=True, flags=0, resource=False):
        self.step("destroy_alloc"); self.handle(DEVICE)
        if resource:
            self.u8(0); self.handle(RESOURCE); self.u8(3, 0, 1, 1 if v2 else 0)
            self.kill(RESOURCE)
        else:
            self.u8(1, 3, n - 1, 2)
            for i in range(n):
                self.handle(ALLOC, i)
            self.u8(1 if v2 else 0)
        if v2:
            self.u8(4 if flags else 0)
            if flags:
                self.u32(flags)

    def escape_stats(self):
        self.step("escape"); self.u8(0, 0); self.handle(ADAPTER)
        self.u8(1, 1, 1, 0, 5, 2); self.b += bytes(72); self.u8(1, 0)

    def fault(self, call=0, nth=1, err=1):
        self.step("escape"); self.u8(0, 1, call, nth - 1, err)

    def query(self, type_idx, size_mode=5):
        self.step("qai"); self.handle(ADAPTER); self.u8(type_idx, size_mode, 2); self.b += bytes(64)

    def state(self):
        self.step("state"); self.handle(DEVICE); self.u8(1)


def base(dev=True):
    p = Prog()
    p.open()
    if dev:
        p.device()
    return p


def seeds():
    s = {}
    p = base(); s["device"] = p
    p = base(); p.alloc(); p.lock(); p.unlock(); s["alloc-lock"] = p
    p = base(); p.alloc(3, resource=True); p.lock(1); p.unlock(1); p.destroy_allocs(resource=True); s["resource"] = p
    p = base(); p.alloc(2, v2=False); p.destroy_allocs(2, v2=False); s["alloc-v1-destroy"] = p
    p = base(); p.alloc(2); p.destroy_allocs(1, flags=1); p.destroy_allocs(1, flags=2); s["destroy-flags"] = p
    p = base(); p.alloc(existing=True); p.lock(); p.unlock(); s["existing-sysmem"] = p
    p = base(); p.alloc(standard=True, existing=True); p.lock(); p.unlock(); s["standard"] = p
    p = base(); p.alloc(size=0); p.alloc(size=1); p.alloc(size=2); s["odd-sizes"] = p
    p = base(); p.alloc(4); p.alloc(4, v2=False, resource=True); s["many"] = p
    p = base(); p.alloc(); p.context(True); p.sync(5); p.submit(); p.wait_cpu(1); s["submit"] = p
    p = base(); p.alloc(); p.context(True); p.sync(5); p.submit(("write", "nop", "delay", "signal")); p.state(); s["submit-cmds"] = p
    p = base(); p.alloc(); p.context(True); p.sync(5); p.submit(("bad",)); p.state(); s["submit-fault"] = p
    p = base(); p.alloc(); p.context(True); p.sync(5); p.submit(("wait",)); p.state(); s["submit-hang"] = p
    p = base(); p.alloc(); p.context(False); p.render(("nop", "fill"), 1); p.render(); s["render"] = p
    p = base(); p.context(True); p.sync(5); p.signal_gpu(); p.wait_gpu(); p.wait_cpu(1); s["fence-gpu"] = p
    p = base(); p.context(True); p.sync(5); p.wait_gpu(value=5); p.signal_cpu(5); p.wait_cpu(5, True); s["fence-cpu"] = p
    p = base(); p.context(True); p.sync(1); p.signal_gpu(variant=0); p.wait_gpu(variant=0); s["mutex"] = p
    p = base(); p.context(True); p.sync(2, 1); p.signal_gpu(variant=0); p.wait_gpu(variant=0); s["semaphore"] = p
    p = base(); p.context(True); p.sync(3); p.signal_gpu(variant=1, value=3); p.wait_gpu(value=3, variant=1); s["legacy-fence"] = p
    p = base(); p.context(True); p.sync(4); p.signal_gpu(variant=0); s["cpu-notification"] = p
    p = base(); p.context(True); p.sync(5); p.sync(5); p.signal_gpu(2); p.wait_gpu(2); s["two-fences"] = p
    p = base(); p.sync(5); p.wait_cpu(9, True); p.destroy("destroy_sync", SYNC); s["async-wait-destroy"] = p
    p = base(); p.context(True); p.sync(5); p.wait_gpu(value=7); p.destroy("destroy_ctx", CTX); s["destroy-waiting-context"] = p
    p = base(); p.alloc(); p.context(True); p.destroy("destroy_device", DEVICE); p.lock(); s["stale-after-device"] = p
    p = base(); p.alloc(); p.destroy_allocs(); p.lock(); p.unlock(); p.destroy_allocs(); s["stale-alloc"] = p
    p = base(); p.alloc(); p.destroy("destroy_ctx", ALLOC); p.destroy("destroy_sync", DEVICE); s["wrong-type"] = p
    p = base(); p.destroy("destroy_device", DEVICE, how="garbage"); p.destroy("close", ADAPTER, how="garbage"); s["garbage"] = p
    p = base(); p.step("close"); p.handle(ADAPTER); p.alloc(); p.context(True); s["device-outlives-adapter"] = p
    p = base(False); [p.query(i) for i in range(12)]; s["query-all"] = p
    p = base(False); p.query(0, 1); p.query(1, 0); p.query(4, 4); s["query-sizes"] = p
    p = base(); p.escape_stats(); p.step("qvm"); p.handle(ADAPTER); p.u8(1, 0, 1); s["escape-qvm"] = p
    p = base(); p.fault(0, 1); p.alloc(); p.fault(0, 2); p.alloc(2); p.context(); s["fault-any"] = p
    p = base(); p.fault(3, 2); p.alloc(3, resource=True); p.lock(); s["fault-create-ext"] = p
    p = base(); p.fault(5, 1); p.alloc(); p.lock(); p.unlock(); s["fault-mmap-offset"] = p
    p = base(); p.fault(2, 1); p.alloc(); p.lock(); s["fault-mmap"] = p
    p = base(); p.fault(6, 1); p.alloc(existing=True); s["fault-userptr"] = p
    p = base(); p.fault(8, 1); p.context(); p.context(True); s["fault-context"] = p
    p = base(); p.fault(9, 1); p.sync(5); s["fault-syncobj"] = p
    p = Prog(); p.step("enum"); p.u8(3, 3, 2, 0); p.device(); p.device(); s["enum-two-devices"] = p
    p = base(); p.alloc(); p.context(True); p.step("shutdown"); p.u8(0); p.lock(); p.device(); p.alloc()
    s["shutdown"] = p
    # every call with every descriptor pointer no caller owns, 60 calls a program
    calls = [(w, k) for w in range(BAD_DESC_CALLS) for k in range(BAD_DESC_POINTERS)]
    for i in range(0, len(calls), 60):
        p = Prog()
        for w, k in calls[i:i + 60]:
            p.step("bad_desc"); p.u8(w, k)
        s["bad-descriptors-%d" % (i // 60)] = p
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for name, p in seeds().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes(p.b))


main()
