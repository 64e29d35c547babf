"""One name per role in C: no two C files linked into the same program share a base name
(the module lws.so and its ASan build, wsbench-loadgen, lws-echo, wsbench_check.so, every
fuzz target), and the load generator names none of its functions as the module does (both
use the wire protocol's room, whose names they share by design).  The file lists come from
the Makefiles themselves (their print-sources targets) and from scripts/fuzz.py's targets."""
import re
import subprocess
from collections import Counter
from pathlib import Path

from testkit.fuzz_check import fuzz_script

ROOT = Path(__file__).resolve().parents[2]
fuzz = fuzz_script()

MAKEFILES = {
    "lws.so": ["quickjs-websocket"],
    # make test-asan: the same Makefile with its own objects and output (scripts/setup-asan.sh)
    "lws.so (ASan)": ["quickjs-websocket", "OBJDIR=/nonexistent/asan-obj", "OUT=/nonexistent/asan-out"],
    "wsbench-loadgen": ["clients/loadgen"],
    "lws-echo": ["servers/lws"],
    "wsbench_check.so": ["clients/quickjs-check"],
}


def make_sources(folder: str, *args: str) -> list[Path]:
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT / folder), *args, "print-sources"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    files = [Path(line) for line in r.stdout.split()]
    assert files and all(f.suffix == ".c" and f.exists() for f in files), r.stdout
    return files


def programs() -> dict[str, list[Path]]:
    out = {name: make_sources(*args) for name, args in MAKEFILES.items()}
    for t in fuzz.TARGETS:
        out[f"fuzz target {t.name}"] = [t.main] + [ROOT / s for s in t.sources]
    return out


def clashes(files: list[Path]) -> list[str]:
    count = Counter(f.name for f in files)
    return sorted(name for name, n in count.items() if n > 1)


def test_no_program_links_two_files_of_one_name():
    found = programs()
    assert len(found) >= len(MAKEFILES) + 8
    wrong = [f"{prog}: {', '.join(str(f.relative_to(ROOT)) for f in files if f.name == name)}"
             for prog, files in found.items() for name in clashes(files)]
    assert not wrong, "C files of one name linked into one program:\n" + "\n".join(wrong)


def test_the_check_sees_a_clash():
    files = [ROOT / "quickjs-websocket" / "src" / "utf8.c", ROOT / "clients" / "loadgen" / "utf8.c",
             ROOT / "wsproto" / "utf8_core.c"]
    assert clashes(files) == ["utf8.c"]


# a definition or declaration at the start of a line: its type (attributes among it:
# "static __attribute__((noinline)) int"), then NAME(
FUNCTION = re.compile(r"^[A-Za-z_](?:[\w \t*]|__attribute__\(\([^()]*(?:\([^()]*\)[^()]*)*\)\))*[ \t*](\w+)\(", re.M)
NOT_NAMES = {"if", "for", "while", "switch", "return", "sizeof"}


def functions(files: list[Path]) -> set[str]:
    names: set[str] = set()
    for f in files:
        names |= {m for m in FUNCTION.findall(f.read_text(errors="replace")) if m not in NOT_NAMES}
    return names


def own_files(folder: str) -> list[Path]:
    d = ROOT / folder
    return sorted(p for p in d.iterdir() if p.suffix in (".c", ".h"))


def test_loadgen_names_no_function_as_the_module_does():
    room = functions(own_files("wsproto"))
    module = functions(own_files("quickjs-websocket/src")) - room
    loadgen = functions(own_files("clients/loadgen")) - room
    assert "conn_rx" in module and "conn_fail" in loadgen  # the pattern finds definitions
    same = sorted(module & loadgen)
    assert not same, "functions the module and the load generator both define: " + ", ".join(same)


def test_the_function_check_sees_a_clash(tmp_path):
    planted = tmp_path / "conn.c"
    planted.write_text("static void mark_dirty(struct conn *c)\n{\n}\n\nint loop_init(void);\n"
                       "static __attribute__((noinline)) int send_deflated(struct conn *c)\n{\n}\n"
                       "static inline __attribute__((always_inline, section(\"x\"))) int take_bytes(int n);\n")
    assert functions([planted]) == {"mark_dirty", "loop_init", "send_deflated", "take_bytes"}
    assert {"mark_dirty", "loop_init"} <= functions(own_files("quickjs-websocket/src"))
