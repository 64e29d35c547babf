"""The results file's schema: its name, the version this wsbench writes, the versions it
reads, and what each version added (``HISTORY``, one entry per version, beside the
constant it explains). Every reader loads a file of any readable version through
``read_json`` (runfile.py): fields a version lacks are read as empty.

To add a field: bump ``SCHEMA_VERSION``, add its entry to ``HISTORY``, and a fixture of
the new version to harness/tests/fixtures/schemas/ (tests/test_schemas.py loads a file of
every version)."""

from __future__ import annotations

SCHEMA = "wsbench-run"
SCHEMA_VERSION = 16
READABLE_VERSIONS = tuple(range(1, SCHEMA_VERSION + 1))

HISTORY: dict[int, str] = {
    1: """\
first release.""",
    2: """\
the run's ``settings`` (min_seconds, verify, pinning); per sample
``reading_errors`` (readings left empty, and why) and ``barrier_s``; clients report
``rounds``, ``checked`` and ``compared`` in ``extra``; servers' ``cpus`` when pinned; the
environment's provenance (lockfile and binary hashes, CPU governor, git state, load
before and after). Version 1 files are still read (the new fields are empty).""",
    3: """\
``conformance`` (``wsbench conformance``; absent or null in other runs):
``cases`` (each with ``id``, ``section`` of RFC 6455, ``group``, ``title``, ``expect``
— fail, deliver or reject —, ``strict``: what a strict client does, ``why``) and
``verdicts``: per client, per case id, ``verdict`` (strict, non-strict or fail) and a
one-line ``detail``. Such a run has no servers, workloads or cells; ``settings`` holds
``jobs``. Versions 1 and 2 are still read (no conformance section).""",
    4: """\
``profiles`` (``wsbench profile``; absent or null in other runs): ``dir``
(the run's ``profiles/<time>/``) and ``cells``, per profiled cell its ``workload``,
``server``, ``client``, ``sides``, ``dir``, ``files`` (SVGs, perf data, folded stacks,
.cpuprofile, breakdown.md), ``breakdown`` per side (``samples``, ``shares`` per category
in percent — summing to 100 —, ``top`` self frames), the ``unprofiled`` and ``profiled``
passes' rates, ``overhead`` (the drop from one to the other), ``notes`` and ``error``;
``startup`` (``wsbench startup``, or ``wsbench profile --startup``; null elsewhere):
``what`` was timed, ``tool`` (hyperfine's version), ``warmup``, ``runs``, and per
``clients`` / ``servers`` name hyperfine's ``mean_s``, ``stddev_s``, ``median_s``,
``min_s``, ``max_s``, ``runs``, the ``peak_rss_kib`` of one more run, the ``command``
and ``error``. A profiled run has ``settings.profiled`` true and no cells: it is never
ranked. Versions 1 to 3 are still read (neither section).""",
    5: """\
``gate`` (``wsbench gate``; absent or null in other runs): ``role``
(``baseline`` for ``baselines/gate.json``, ``report`` for ``reports/gate-*.json``);
a baseline holds ``deterministic`` (the ``machine`` it was counted on — CPU model and
flags, compiler, libc, valgrind —, ``rise`` and ``fall`` thresholds, and ``counts``
per profile, full and quick, per cell ``instructions``, ``messages`` and
``per_message``) and ``wall`` (the reference client, the clients, server, workloads
and repetitions of the wall-clock gate, its ``thresholds`` — alpha and minimum effects
— with their ``calibration``; the run's cells are that measurement's repetitions); a
report holds the ``outcomes`` of each gate (findings: cell, metric, baseline, value,
change, verdict) and the ``exit_code``. Versions 1 to 4 are still read.""",
    6: """\
servers' ``target`` (the URL of a server wsbench did not start, ``wsbench run
--target``; null otherwise) and ``readings`` (where its CPU time and peak RSS were read:
its own process, a process named with ``--target-pid``, or "n/a (external)", when the
server CPU and RSS of every sample are null); the environment's ``docker`` section in
runs of ``make bench-docker``: ``images`` (per service its image tag and ID), ``cpusets``
(per side the CPUs its containers may use), ``cpu_limits`` (per container its cpuset,
NanoCpus and CpuQuota), ``engine`` (the Docker engine's version, storage driver and
cgroup version), ``server_runtimes`` (per server its runtime and that runtime's version
as printed inside its container; absent in the first runs of version 6) and ``readings``
(how the servers' CPU and RSS were read); ``settings.shard``
([I, N] of ``wsbench run --shard I/N``, else null); a run of ``wsbench merge`` has
``settings.merged_shards`` (N) and ``environment.shards`` (per shard its file, times, load
and commit). Versions 1 to 5 are still read (no target, no readings, no shard).""",
    7: """\
the TLS track (``wsbench run --tls on|both``). ``settings.tls``: null, or the
axis (``mode``: on or both) and the certificate the servers present (``certificate``, its
``key_type``, ``names`` and ``file``, and the ``ca`` every client trusts); a server in TLS
mode is the twin ``NAME/wss`` of the catalog's server, and its record's ``tls`` holds that
certificate (null for every other server and for clients). Per sample, ``extra.tls`` is
what the client tells of its first wss:// connection (``version``, ``cipher``, ``group``,
``library``, each null where it cannot tell, and ``cannot_tell`` with the reason), and
``extra.server_tls`` what the server printed for the sample's connections
(servers/README.md, WSBENCH-TLS: ``connections``, ``resumed``, ``version``, ``cipher``,
``group``, ``library``; absent where the server prints nothing). Workloads carry
``tls_only`` (true: measured over wss:// only, e.g. session resumption). A conformance run
(``wsbench conformance --tls``) has the same shape: ``settings.tls`` (mode "on", the
peer's certificate, and ``failure_certificates``: per failure-set entry its file), and its
``conformance`` section may hold cases of group ``tls-failure`` whose ``expect`` is
``refuse`` (a certificate to refuse) or ``fault`` (a TLS session ended mid-message), and
verdicts ``n/a`` (the client cannot speak TLS; the detail says why). Plain conformance
runs record ``settings.tls`` null. Versions 1 to 6 are still read (no TLS).""",
    8: """\
histograms that merge, and runs on a cluster (docs/scaling.md). Per sample of a
latency or open-loop workload, ``extra.latency_hist``: the client's latency histogram,
sparse (``unit_ns``, ``sub_bits``, ``integer_values``: how a bucket index maps to values;
``count``; ``min``, ``max`` and ``sum``, exact, in units; ``buckets``: ``[index, count]`` of
every non-empty bucket; clients/README.md, "Latency histograms"). A merged run (``wsbench
merge``, ``wsbench run --cluster``) adds histograms per repetition: its ``latency_us`` are
the percentiles of the sum, and ``extra.shards_latency_us`` lists each shard's
``latency_us``; ``environment.shards`` entries gain ``worker`` (the shard's ``address``,
``host`` and ``name``, null for files of ``--shard``). A cluster run (``wsbench run
--cluster``) also has ``settings.cluster``: ``engine`` (name and version), ``address`` (as
given), ``scheduler``, ``local`` (a ``local:N`` cluster), ``ready_timeout_s``,
``load_workers`` (per shard its ``shard`` number, ``address``, ``host``, ``name`` and
``clock``: ``offset_s`` against the coordinator's wall clock and its ``uncertainty_s``),
``server_worker`` (the same, or null), ``server_pids`` (the server's processes on its
host) and ``failure`` (why the run stopped, or null); its ``environment.shards`` entries
add ``clock``, ``cpu_model``, ``logical_cpus``, ``kernel`` and ``runtimes`` of each load
host; per merged sample ``extra.start_skew_s`` (the largest difference between two shards'
``GO``, each by its host's wall clock) and ``extra.barrier`` (``go_after_first_s`` and
``go_after_release_s`` per shard, ``phases_overlap``: the fraction of the union of the
shards' measured phases that all of them cover), and the server's CPU time and peak RSS
as read on its host over the union of the phases (``servers.NAME.readings`` says how).
Versions 1 to 7 are still read (no histograms: their latency workloads do not merge).

Also in version 8, capacity (the `idle` and `fanout` kinds): workloads carry
``fresh_server`` (every sample on a server started for it) and ``ramp`` (null, or the
``connections`` tried and the ``p95_ms`` bound); the environment's ``limits`` (the
harness's RLIMIT_NOFILE, which its children get with soft = hard, and the sysctls
ip_local_port_range, somaxconn, tcp_mem, fs.nr_open, fs.file-max); per sample of those
kinds ``extra.limits`` (each side's RLIMIT_NOFILE, [soft, hard]),
``extra.server_rss_before_kib``, ``extra.marks`` (per WSBENCH-MARK of the client: ``t_s``
since GO, both sides' CPU since GO and resident memory then), ``extra.stopped`` (the
one-line reason a limit stopped the client, with the count it held), and for a ramp
``max_connections``, ``ramp_stopped`` and its ``steps``.""",
    9: """\
what a program must report of itself and what it reported (issue 25). Every
server and client record has ``expect`` (null, or the catalog's dotted keys and values,
e.g. ``{"ws.bufferutil": true}``: a sample whose result line, or a server whose
``WSBENCH-INFO`` line, says otherwise failed), ``info`` (servers: the object of their
``WSBENCH-INFO`` line, e.g. ``{"ws": {"bufferutil": true, "mask": "bufferutil", "addon":
..., "version": ..., "utf8": ...}}``; null where the server printed none, for clients and
targets) and ``barrier`` (clients: how they took the start barrier and the end hold,
``"stdin"`` or ``"http"``; null for servers). A node-ws client's samples carry the same
``ws`` object in ``extra``. In runs of ``make bench-docker`` the environment's
``docker.server_runtimes.<name>`` also holds ``info``. Versions 1 to 8 are still read
(the three keys null).""",
    10: """\
``server_conformance`` (``wsbench conformance --servers``; absent or null in other
runs): ``cases`` (as ``conformance.cases``: ``id``, ``section`` of RFC 6455, ``group`` —
Autobahn's section number and name, e.g. "6 UTF-8" —, ``title``, ``expect`` — echo, fail
or info —, ``strict``: what a strict server does, ``why``) and ``verdicts``: per server,
per case id, ``verdict`` (strict, non-strict, fail or informational), ``detail`` (one
line), ``close`` (the close behaviour: strict, non-strict or fail) with its
``close_detail``, and ``observed``: what the server sent back (``handshake``: null or why
the upgrade failed; ``frames``: the first 40, each with ``t``, ``fin``, ``rsv``,
``opcode``, ``masked``, ``length``, ``head`` — in hex, a data frame's first 32 bytes, a
control frame's whole payload — and
for a close ``close_code`` and ``close_reason``; ``frames_total``, ``script_done_t``,
``our_close_t``, ``answered`` — our close answered the server's —, ``tcp_end`` —
server-eof, server-reset, client-closed, gave-up —, ``tcp_end_t``, ``write_failed``,
``notes``; times in seconds since the 101). Such a run records the servers (a
``--target`` with its ``target`` URL; with ``--tls`` the twins NAME/wss with their
``tls``) and no clients, workloads or cells; ``settings`` holds ``jobs`` and ``tls``
(null, or mode "on" and the certificate the servers presented). Versions 1 to 9 are
still read (no such section).""",
    11: """\
what each program of a ``wsbench run`` checks (issue 31). Every server and client
record has ``conformance``: null (a run that checked none: ``wsbench merge`` of older
shards, profiles, the gate), or ``source`` — ``file``: a ``wsbench conformance`` results
file of the same program versions (the same runtime version, lockfile and binary hashes),
named in ``file``, with its ``created``; ``quick``: the quick subset of UTF-8 and masking
cases, played at verify time; ``none``: not checked (``--conformance off``, or it could
not be played) —, ``note`` (one line: which file or subset, or why not) and ``checks``:
per check RFC 6455 asks of the program (``key``: utf8, masking, rsv, opcodes,
fragmentation, length-top-bit, control-length, close; ``name``), ``cases`` (the cases
of invalid input about it that were judged; 0: not checked) and ``let_through`` (the ids
of those the program failed: it echoed, delivered or ignored the input, or answered
with a wrong code). Such a run's ``conformance`` and ``server_conformance`` sections
hold the verdicts the summaries were made of (the quick subset's, or those copied from
the file, without ``observed``), for the report's case-by-case table; null when no
program of that side was checked. Versions 1 to 10 are still read (no summaries: the
tables mark nothing).""",
    12: """\
the deflate axis (``wsbench run --deflate off|on|both``, issue 32).
``settings.deflate``: null (off: every server refuses permessage-deflate, as before), or
``{"mode": "on"|"both"}``; a server with permessage-deflate on is the twin ``NAME/deflate``
of the catalog's server (started with the catalog's ``deflate`` arguments, e.g.
``--deflate``). Every server and client record has ``deflate``: null (a run without the
axis, and the servers without compression in a run with it), else ``args``, ``env`` (what
turns it on) and ``defaults`` (what the runtime does unless told, e.g. ws'
``threshold_bytes`` 1024), or ``cannot`` with the reason (the cells of such a program with
deflate on are n/a with it; a server twin that cannot compress is not started). Per sample
``extra.server_deflate`` is what the server printed for the sample's connections
(servers/README.md, WSBENCH-DEFLATE: ``connections``, ``negotiated`` — how many it answered
with permessage-deflate, null where it cannot tell —, ``offered`` and ``response``, each
the header's value, "none", or null where the server cannot tell; absent for servers
without deflate on), and ``extra.extensions`` what the client's WebSocket says its first
connection agreed (its ``extensions`` attribute; absent when empty or when the client has
none). Versions 1 to 11 are still read (the records' ``deflate`` null, no axis).""",
    13: """\
bytes on the wire, counted by the kernel (socket_bytes.py). Per sample ``extra.wire``: the
TCP payload the server's established connections on its port received (``c2s_bytes``)
and sent (``s2c_bytes``, each byte once: ``bytes_sent`` less ``bytes_retrans``; what TCP
sent again is ``s2c_resent_bytes``) between the start and the end barrier (tcp_info's
counters from ``ss -tin``: frame headers, masks, compression and TLS records included),
over ``connections`` connections, and per message
(``c2s_per_msg``, ``s2c_per_msg``: over the sample's ``messages``); absent, with a line in
``reading_errors``, where the connections changed while measured (a closed connection's
counters are gone) or ``ss`` could not be read. The clients hold at the end barrier with
their connections open and close them after it. A program's ``deflate`` record has
``command`` where compression is another build (lws-echo-deflate). Versions 1 to 12 are
still read.""",
    14: """\
``deflate_conformance`` (``wsbench conformance --deflate``, with ``--servers`` for the
servers; absent or null in other runs): permessage-deflate (RFC 7692) held to its rules,
``clients`` and ``servers``, each null or of the shape of ``conformance`` (clients) and
``server_conformance`` (servers): ``cases`` (ids ``pmd-*``; ``section`` of RFC 7692;
``group`` pmd-negotiation, pmd-decline, pmd-messages, pmd-violations or pmd-limits with
its name; a server case's ``title`` names the Sec-WebSocket-Extensions offer it sends) and
``verdicts`` per client or server twin (``NAME/deflate``) and case: strict, non-strict,
fail, informational, or n/a (the program cannot compress: the catalog's reason); a
server verdict's ``observed`` adds ``offer`` and ``extensions`` (the server's answer).
``settings.deflate`` is ``{"mode": "on"}``. Versions 1 to 13 are still read (no such
section).""",
    15: """context takeover and memory after traffic (issue 32). Every workload has
``no_context_takeover`` (true: with permessage-deflate on, every client offers
``server_no_context_takeover; client_no_context_takeover``; a client that cannot is n/a);
a client's ``deflate`` record may have ``no_takeover`` (the ``args`` and ``env`` that make
that offer). An ``idle`` workload's ``params`` may have ``warm`` (each connection sends one
1 KiB JSON message and takes its echo before the hold and its mark), and its samples'
``extra.warmed`` counts those echoes. Versions 1 to 14 are still read (workloads without
``no_context_takeover`` are read as false).""",
    16: """\
instruction counts on another architecture (issue 35). A gate baseline's ``gate`` has
``arches``: per architecture other than x86-64 (``armhf``: counted under ``qemu-arm`` by
wsbench's TCG plugin) a ``deterministic`` section of its own — its ``machine`` (the facts
its counts depend on: the QEMU version, the plugin's and the armhf binaries' sha256, the
cross compiler, the sysroot's pins), ``rise``, ``fall`` and ``counts`` per profile per cell
(cells ``qjs-armhf/<workload>``); ``deterministic`` stays x86-64's. ``counts``
(``wsbench count``; absent or null in other runs): per architecture (``x86-64``,
``armhf``) its ``tool``, ``machine``, ``profile`` and, per cell key
(``workload/server/client``, clients by catalog name such as ``quickjs-no-join``),
``instructions``, ``messages`` and ``per_message`` of the measured phase, and ``failed``
(cell key: the one-line reason). ``footprint`` (``wsbench footprint``; absent or null in
other runs): ``what`` was read and how, and per architecture (``x86-64``, ``armhf``) the
``client`` (catalog name), its ``command``, the ``strip`` tool, ``files`` (``role``,
``path``, ``bytes``, ``stripped_bytes`` of a stripped copy, null for a file that is not
ELF), ``mapped`` (the files its process maps at start-up: ``path``, ``bytes``, ``origin``
— built here, sysroot or system — and the system file's Debian ``package``),
``startup_rss_kib`` (VmRSS of each start-up run), ``startup_guest_rss_kib`` (under
qemu-user, the guest's own resident pages; null natively) and ``error``. A mark's readings
(``extra.marks.NAME``) may have ``client_guest_rss_kib``: a client under qemu-user, the
resident pages of its guest's address space. Versions 1 to 15 are still read (no arches,
no counts, no footprint).""",
}
