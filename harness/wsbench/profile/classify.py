"""Where a frame belongs: the one place with the rules, by DSO and symbol.

A sample is charged to its self (leaf) frame. The first rule that matches wins; every
frame falls into exactly one category ("unknown" at the end), so the shares of a table
always sum to 100 %.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .stacks import Frame

KERNEL = "kernel"
LIBC = "libc & allocator"
ENGINE = "engine & runtime"
GC = "GC"
JS = "JS code"
LWS = "libwebsockets"
OURS = "our C"
TLS = "TLS & crypto"
OTHER = "other libraries"
UNKNOWN = "unknown"

# In the order of the tables.
CATEGORIES = (KERNEL, LIBC, ENGINE, GC, JS, LWS, OURS, TLS, OTHER, UNKNOWN)

DESCRIPTIONS = {
    KERNEL: "the kernel: network stack, syscalls, scheduler, page faults",
    LIBC: "libc, libm, the dynamic loader, libstdc++, and any allocator (malloc/free, mimalloc, "
          "bmalloc, tcmalloc, Go's mallocgc in k6) whatever binary it is linked into",
    ENGINE: "the JS engine's and runtime's own native code: V8, JSC, QuickJS (its interpreter too), "
            "libuv, Node's C++, Deno's and Bun's Rust/Zig, the engines' builtins and stubs; k6's Go: its "
            "modules (k6/websockets), sobek (its JS interpreter, so k6's JavaScript is here too) and the Go "
            "runtime (scheduler, channels, memmove)",
    GC: "the engine's garbage collector, where its symbols tell it apart (V8, QuickJS and Go's in k6; "
        "Bun's are stripped and stay under the engine)",
    JS: "JIT-compiled (or V8-interpreted) JavaScript functions, named through the perf map",
    LWS: "libwebsockets",
    OURS: "our own C: the QuickJS WebSocket module (lws.so), the qjs echo checks, lws-echo, wsbench-loadgen",
    TLS: "the TLS library and its cryptography: the system's libssl and libcrypto (OpenSSL, used by QuickJS's "
         "own TLS transport, libwebsockets and the load generator, whose masks over ws:// come from it too), "
         "and by symbol the ones linked into a runtime: Node's OpenSSL, k6's Go crypto (Bun's BoringSSL and "
         "Deno's rustls are in stripped binaries: they stay under the engine)",
    OTHER: "any other shared library (libz, ...)",
    UNKNOWN: "frames perf could not attribute to any file",
}


@dataclass(frozen=True)
class Rule:
    category: str
    dso: re.Pattern[str] | None = None  # matched against the DSO's path
    symbol: re.Pattern[str] | None = None  # matched against the symbol

    def matches(self, frame: Frame) -> bool:
        return ((self.dso is None or bool(self.dso.search(frame.dso)))
                and (self.symbol is None or bool(self.symbol.search(frame.symbol))))


def _r(category: str, dso: str | None = None, symbol: str | None = None) -> Rule:
    return Rule(category, re.compile(dso) if dso else None, re.compile(symbol) if symbol else None)


PERF_MAP = r"/perf-\d+\.map$"
ALLOCATOR = (r"^(__libc_)?(malloc|calloc|realloc|free|cfree|memalign|posix_memalign|aligned_alloc)$|"
             r"^_int_(malloc|free|realloc|memalign)|^malloc_|^tcache_|^unlink_chunk|"
             r"^mi_|^_mi_|^je_|^tc_|^bmalloc::|^pas_|^bmalloc_|^operator (new|delete)")

# k6 is one static Go binary: Go's collector (write barriers and the span scans of its
# newer collector included) and its allocator are told apart by symbol; the rest of the
# binary is the runtime (ENGINE, below).
K6 = r"(^|/)k6$"
GO_GC = (r"^runtime\.(gc[A-Z]\w*|gcDrain\w*|gcBgMarkWorker|scanobject|scanblock|scanstack|scanframeworker|"
         r"greyobject|markroot\w*|markBits\w*|shade|findObject|wbBuf\w*|bgsweep|bgscavenge|sweepone|"
         r"tryDeferToSpanScan|scanSpan\w*|spanSetSpinMutex\w*|bulkBarrier\w*|gcWriteBarrier\w*|"
         r"typePointers\w*|\(\*(gcWork|gcControllerState|gcBits|sweepLocked|spanInlineMarkBits)\)\.\w+|"
         r"\(\*mspan\)\.(sweep|markBits\w*|typePointers\w*))$")
GO_ALLOCATOR = (r"^runtime\.(mallocgc\w*|newobject|newarray|makeslice\w*|growslice|nextFreeFast|heapSetType\w*|"
                r"memclrNoHeapPointers\w*|\(\*(mcache|mcentral|mheap|pageAlloc|fixalloc)\)\.\w+|"
                r"\(\*mspan\)\.(nextFreeIndex|init|refillAllocCache))$")

# TLS and crypto linked into a runtime's binary, by symbol: OpenSSL's (Node: its public API,
# its internals such as fe_mul of X25519 and the assembly's names) and BoringSSL's names,
# rustls and ring (Rust symbols, demangled), Go's crypto packages (k6). Bun's and Deno's
# binaries are stripped: their TLS stays under the engine.
LINKED_TLS = (r"^(SSL_|ssl3?_|tls(1|13)?_|ossl_|OSSL_|EVP_|evp_|aesni_|aes_|AES_|gcm_|GCM_|"
              r"sha(1|256|512)_|SHA(1|256|512)_|ecp_|ec_|EC_|ecdsa_|ECDSA_|x25519|X25519|curve25519|fe_|fe51_|"
              r"BN_|bn_|RSA_|rsa_|X509|x509|ASN1_|asn1_|d2i_|i2d_|PEM_|OBJ_|ERR_|RAND_|rand_|OPENSSL_|"
              r"CRYPTO_|HMAC|hmac_|kdf_|ChaCha20|chacha20|Poly1305|poly1305|bssl::|ring_core_|aws_lc_|"
              r"<?(rustls|ring|aws_lc_rs|tokio_rustls)::|crypto/|vendor/golang\.org/x/crypto/|golang\.org/x/crypto/)")

RULES: tuple[Rule, ...] = (
    _r(KERNEL, dso=r"^\[kernel|^\[guest\.kernel"),
    _r(LIBC, dso=r"(^|/)(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so"),
    _r(LIBC, dso=r"^\[vdso\]$"),
    _r(LIBC, symbol=ALLOCATOR),
    _r(GC, dso=K6, symbol=GO_GC),
    _r(LIBC, dso=K6, symbol=GO_ALLOCATOR),
    _r(TLS, dso=r"(^|/)lib(ssl|crypto)\.so"),
    _r(TLS, dso=r"(^|/)(node|deno|bun|k6)$", symbol=LINKED_TLS),
    _r(LWS, dso=r"(^|/)libwebsockets\.so"),
    _r(OURS, dso=r"(^|/)(lws\.so|wsbench_check\.so|lws-echo|wsbench-loadgen)$"),
    # JIT code named by a perf map: V8 names JS functions "JS:*f" (optimized) / "JS:~f"
    # (interpreted or baseline) / "JS:^f" (Sparkplug) / "JS:+f" (Maglev); JSC's tiers are
    # "JSC-Baseline: f", "JSC-DFG: f", "JSC-FTL: f" (and "JSC-LLInt..." for the interpreter).
    _r(JS, dso=PERF_MAP, symbol=r"^(JS:|LazyCompile:|Function:|Script:|JSC-(Baseline|DFG|FTL|BaselineJIT|OMG|BBQ): )"),
    _r(ENGINE, dso=PERF_MAP),  # builtins, bytecode handlers, stubs, thunks, inline caches
    # Garbage collectors, where their symbols can be told apart.
    _r(GC, symbol=r"v8::internal::(heap::|Heap::|Scavenger|ScavengeJob|MarkCompact|MinorMarkCompact|"
                  r"MinorMS|Marking|.*Marking(Visitor|Worklist|State|Barrier)|ConcurrentMarking|Sweeper|"
                  r"Evacuat|.*GCTracer|MemoryAllocator|PagedSpace|NewSpace|SemiSpace|LargeObjectSpace|"
                  r"MainMarkingVisitor|IncrementalMarking|MarkingBarrier)|cppgc::|Heap::CollectGarbage"),
    _r(GC, symbol=r"^JSC::(Heap|SlotVisitor|MarkedSpace|MarkedBlock|Subspace|GCActivityCallback|"
                  r"IsoSubspace|BlockDirectory|MarkingConstraint)"),
    _r(GC, symbol=r"^(JS_RunGC|gc_decref|gc_decref_child|gc_scan|gc_scan_incref_child|gc_scan_incref_child2|"
                  r"gc_free_cycles|mark_children|free_zero_refcount|free_gc_object|__JS_FreeValueRT|"
                  r"free_object|free_function_bytecode|js_free_shape|free_var_ref|js_trigger_gc)$"),
    # Anything else in a known engine or runtime binary, named or not (Bun's is stripped).
    _r(ENGINE, dso=r"(^|/)(qjs|node|deno|bun|k6)$"),
    _r(ENGINE, dso=r"(^|/)lib(node|v8|uv|quickjs|JavaScriptCore)[^/]*\.so"),
    _r(UNKNOWN, dso=r"^\[unknown\]$"),
    _r(UNKNOWN, dso=r"^//anon|^\[anon|^anon_inode"),
)


def classify(frame: Frame) -> str:
    for rule in RULES:
        if rule.matches(frame):
            return rule.category
    if frame.dso.startswith("/"):
        return OTHER
    return UNKNOWN


def frame_label(frame: Frame) -> str:
    """A self frame as the tables show it: symbol (file)."""
    dso = frame.dso.rsplit("/", 1)[-1]
    return f"{frame.symbol} ({dso})"
