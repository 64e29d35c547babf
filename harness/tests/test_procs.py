import os
import signal
import sys
import time
from pathlib import Path

from wsbench import procfs, procs

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie no longer counts.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[1][0] != "Z"


def test_terminate_kills_the_whole_group_including_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (f"import subprocess, time; p = subprocess.Popen(['sleep', '60']); "
              f"open({str(pidfile)!r}, 'w').write(str(p.pid)); print('up', flush=True); time.sleep(60)")
    proc = procs.spawn([sys.executable, "-c", script], cwd=ROOT)
    reader = procs.LineReader(proc)
    assert reader.readline(time.monotonic() + 10) == "up"
    reader.close()
    child = int(pidfile.read_text())
    assert alive(proc.pid) and alive(child)
    procs.terminate(proc, grace_s=1.0)
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(proc.pid) and not alive(child)


def test_a_group_that_ignores_sigterm_is_killed() -> None:
    script = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    proc = procs.spawn([sys.executable, "-c", script], cwd=ROOT)
    reader = procs.LineReader(proc)
    assert reader.readline(time.monotonic() + 10) == "up"
    reader.close()
    began = time.monotonic()
    procs.terminate(proc, grace_s=0.5)
    assert proc.returncode == -signal.SIGKILL
    assert time.monotonic() - began < 5


def test_line_reader_honours_its_deadline_and_sees_eof() -> None:
    proc = procs.spawn([sys.executable, "-c", "import time; print('a', flush=True); time.sleep(1); print('b')"], cwd=ROOT)
    reader = procs.LineReader(proc)
    assert reader.readline(time.monotonic() + 10) == "a"
    began = time.monotonic()
    assert reader.readline(time.monotonic() + 0.2) is None
    assert time.monotonic() - began < 0.8
    assert reader.readline(time.monotonic() + 10) == "b"
    assert reader.readline(time.monotonic() + 10) is None and reader.eof
    reader.close()
    procs.terminate(proc)


def test_procfs_reads_this_process() -> None:
    pid = os.getpid()
    before = procfs.process_cpu_ns(pid)
    sum(i * i for i in range(200_000))  # spend some CPU
    after = procfs.process_cpu_ns(pid)
    assert before is not None and after is not None and after > before
    assert procfs.running(pid)
    assert procfs.peak_rss_kib(pid) > 1000
    assert procfs.reset_peak_rss(pid) is None
    assert "cannot reset the peak RSS of process 999999999" in str(procfs.reset_peak_rss(999_999_999))
    assert procfs.process_cpu_ns(999_999_999) is None
    assert not procfs.running(999_999_999)


def test_cpu_clock_counts_threads_that_have_exited() -> None:
    script = ("import threading, time\n"
              "t = threading.Thread(target=lambda: sum(range(3_000_000))); t.start(); t.join()\n"
              "print('done', flush=True); time.sleep(30)")
    proc = procs.spawn([sys.executable, "-c", script], cwd=ROOT)
    reader = procs.LineReader(proc)
    assert reader.readline(time.monotonic() + 20) == "done"
    reader.close()
    cpu = procfs.process_cpu_ns(proc.pid)
    procs.terminate(proc)
    assert cpu is not None and cpu > 20_000_000  # the worker's ~0.1 s is still counted
