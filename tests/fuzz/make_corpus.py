#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus (tests/fuzz/corpus/): programs that do
what a driver does (open, create, lock, submit, signal, wait, destroy,
share and open shared objects) and then the misuses the rules are about.  Each byte follows the harness's
reading order (fuzz_steps_*.c); `python3 make_corpus.py DIR` rewrites them."""
import os
import struct
import sys

STEPS = ["enum", "open", "close", "qai", "qvm", "create_device", "destroy_device", "state", "escape",
         "create_alloc", "destroy_alloc", "lock", "unlock", "create_ctx", "destroy_ctx", "submit", "render",
         "create_sync", "destroy_sync", "signal_gpu", "wait_gpu", "signal_cpu", "wait_cpu",
         "create_device2", "create_alloc2", "create_ctx2", "create_sync2", "open2", "shutdown", "bad_desc",
         "share", "close_nt", "query_res", "open_res", "open_nt_name", "create_km", "open_km", "destroy_km",
         "acquire_km", "release_km", "open_sync", "escape_wine"]
BAD_DESC_CALLS, BAD_DESC_POINTERS = 36, 7
BAD_DESC_SHARE = range(39, 59)         # the sharing calls of step_bad_desc
ADAPTER, DEVICE, RESOURCE, ALLOC, CTX, SYNC, KM = range(7)
SHARED, NT_SHARED = 0x2, 0x42          # CreateShared, with NtSecuritySharing


class Prog:
    def __init__(self):
        self.b = bytearray()
        self.live = {k: [] for k in range(7)}
        self.n = 0
        self.globals = 0                # global handles the creates gave
        self.nts = 0                    # NT handles the program got

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

    def alloc(self, n=1, v2=True, resource=False, size=4, existing=False, standard=False, dev=-1, share=0):
        flags = (1 if resource else 0) | (0x20 if existing else 0) | (0x10000 if standard else 0) | share
        if share == SHARED:
            self.globals += 1
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

    def sync(self, type_=5, value=0, shared=0):
        self.step("create_sync"); self.handle(DEVICE); self.u8(1, type_)
        if shared:                      # 1: Shared, 3: Shared|NtSecuritySharing
            self.u8(4); self.u32(shared)
            self.globals += shared == 1
        else:
            self.u8(0)
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

    # ---- sharing (fuzz_steps_share.c; fuzz_share.c reads handles and names)
    def glob(self, i):                  # a global handle a create gave
        self.u8(0, i)

    def nt(self, i):                    # an NT handle the program got, perhaps closed
        self.u8(0, i)

    def name(self, i=None):             # None: NULL attributes
        self.u8(0) if i is None else self.u8(4, i)

    def share(self, kinds=(RESOURCE,), name=None):
        first = {RESOURCE: 0, KM: 1, SYNC: 2}[kinds[0]]
        self.step("share"); self.u8(1, 1 if len(kinds) == 3 else 0, first)
        for k in kinds:
            self.handle(k)
        self.name(name); self.u8(3, 2, 1)   # GENERIC_ALL, the out pointer, the object array
        self.nts += 1

    def close_nt(self, i):
        self.step("close_nt"); self.u8(i)

    def query_res(self, nt=None, glob=None):
        self.step("query_res"); self.u8(1 if nt is not None else 0); self.handle(DEVICE)
        self.nt(nt) if nt is not None else self.glob(glob)
        self.u8(2, 1)

    def open_res(self, nt=None, glob=None, v2=True, n=1, km=False, sync=False):
        self.step("open_res"); self.u8(0 if nt is not None else 1, 1 if v2 else 0); self.handle(DEVICE)
        self.nt(nt) if nt is not None else self.glob(glob)
        self.u8(2, 1, 2, 2, 2, 2, 1)    # query, no size changed, the four buffers, driver data placed
        if nt is not None:
            self.u8(1, 2)               # no keyed mutex runtime data
        self.new(RESOURCE)
        for _ in range(n):
            self.new(ALLOC)
        if km:
            self.new(KM)
        if sync:
            self.new(SYNC)

    def open_nt_name(self, i, sync=False):
        self.step("open_nt_name"); self.name(i); self.u8(3, 0 if sync else 1)
        self.nts += 1

    def create_km(self, v2=False, nt=False, key=0):
        self.step("create_km"); self.u8(1, key)
        if v2:
            self.u8(0, 1, 1)            # v2, no runtime data
            if nt:
                self.u8(4); self.u32(1)
            else:
                self.u8(0)
        else:
            self.u8(1)
        self.globals += not nt
        self.new(KM)

    def open_km(self, glob=None, nt=None, v2=False):
        self.step("open_km")
        if nt is not None:
            self.u8(2); self.nt(nt); self.u8(1, 2)
        elif v2:
            self.u8(1); self.glob(glob); self.u8(1, 2)
        else:
            self.u8(0); self.glob(glob)
        self.new(KM)

    def acquire_km(self, key=0, ms=0, v2=False, k=-1):
        self.step("acquire_km"); self.handle(KM, k); self.u8(0 if v2 else 1, 1, key)
        if v2:
            self.u8(1, 2)
        self.u8(0, ms) if ms else self.u8(2)

    def release_km(self, key=0, value=1, v2=False, k=-1):
        self.step("release_km"); self.handle(KM, k); self.u8(0 if v2 else 1, 1, key, 2, value)
        if v2:
            self.u8(1, 2)

    def open_sync(self, glob=None, nt=None, device=False):
        self.step("open_sync")
        if glob is not None:
            self.u8(0); self.glob(glob)
        elif not device:
            self.u8(1); self.nt(nt)
        else:
            self.u8(2); self.nt(nt); self.handle(DEVICE); self.u8(0, 1)
        self.new(SYNC)

    def escape_wine(self, update=True):
        self.step("escape_wine"); self.u8(1 if update else 0, 1, 1)
        if update:
            self.handle(RESOURCE)
        else:
            self.u32(0x10010)           # a window's handle
        self.u8(5, 1, 2)                # the natural size, the payload
        self.b += b"vkd3d-proton-runtime-24" + b"\0" if update else struct.pack("<4i", 0, 0, 640, 480)


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
    # sharing: resources by global handle, by NT handle, by name; keyed mutexes; sync objects
    p = base(); p.alloc(1, resource=True, share=SHARED); p.query_res(glob=0); p.open_res(glob=0, v2=False)
    p.open_res(glob=0); p.lock(); p.unlock(); p.destroy_allocs(resource=True); p.open_res(glob=0)
    s["share-resource-global"] = p
    p = base(); p.alloc(2, resource=True, share=NT_SHARED); p.share(); p.query_res(nt=0); p.open_res(nt=0, n=2)
    p.close_nt(0); p.open_res(nt=0, n=2); s["share-resource-nt"] = p
    p = base(); p.alloc(1, resource=True, share=NT_SHARED); p.create_km(v2=True, nt=True); p.sync(5, shared=3)
    p.share((RESOURCE, KM, SYNC), name=0); p.open_nt_name(1); p.open_res(nt=1, km=True, sync=True)
    p.acquire_km(0); p.release_km(1, 7); p.open_nt_name(1, sync=True); p.open_nt_name(2)
    s["share-three-named"] = p
    p = base(False); p.create_km(); p.acquire_km(0); p.release_km(1, 5); p.acquire_km(0, ms=2); p.open_km(glob=0)
    p.acquire_km(1, v2=True); p.release_km(0, 6, v2=True); p.open_km(glob=0, v2=True)
    p.destroy("destroy_km", KM, 0); p.acquire_km(0, k=0); p.destroy("destroy_km", KM, how="stale")
    s["keyed-mutex"] = p
    p = base(); p.alloc(1, resource=True, share=NT_SHARED); p.create_km(v2=True, nt=True); p.sync(5, shared=3)
    p.share((KM,)); p.share((RESOURCE, KM, SYNC)); p.open_res(nt=1, km=True, sync=True); p.acquire_km(0, k=0)
    p.destroy("destroy_km", KM, 0); p.acquire_km(0, ms=1); p.close_nt(1); p.open_km(nt=1)
    s["keyed-mutex-abandoned"] = p
    p = base(); p.context(True); p.sync(5, shared=1); p.open_sync(glob=0); p.sync(5, shared=3); p.share((SYNC,))
    p.open_sync(nt=0); p.open_sync(nt=0, device=True); p.signal_cpu(3); p.wait_cpu(3)
    p.destroy("destroy_sync", SYNC, 0); p.open_sync(glob=0); s["sync-shared"] = p
    p = base(); p.alloc(1, resource=True, share=SHARED); p.escape_wine(); p.query_res(glob=0); p.open_res(glob=0)
    p.escape_wine(False); s["escape-wine"] = p
    calls = [(w, k) for w in BAD_DESC_SHARE for k in range(BAD_DESC_POINTERS)]
    for i in range(0, len(calls), 60):
        p = Prog()
        for w, k in calls[i:i + 60]:
            p.step("bad_desc"); p.u8(w, k)
        s["bad-descriptors-share-%d" % (i // 60)] = p
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
