"""``wsbench gate``: regression gating that never cries wolf.

- ``cells``: what the deterministic gate counts (program, workload, message counts);
- ``callgrind``: one cell under valgrind's callgrind, only the measured phase counted;
- ``qemu``: the armhf client's cells under ``qemu-arm`` with wsbench's counting plugin;
- ``arches``: per ``--arch`` (x86-64, armhf) its cells, counter, machine facts and gates;
- ``machine``: the fingerprint a baseline was taken on (CPU, compiler, libc, valgrind);
  armhf's is QEMU's, the plugin's, the cross compiler's and the sysroot's (``qemu``);
- ``baseline``: the baseline file (a wsbench results file with a ``gate`` section);
- ``deterministic``: instructions per message against the baseline (3 % either way);
- ``wall``: ratios of our clients to a reference client, Mann-Whitney U and a minimum
  effect, re-measured once before a regression is confirmed;
- ``verdict``: exit codes and the report lines both gates share;
- ``findings``: the findings (and a baseline's figures) as report sections, and a gate
  report as a document (``reports/gate-*.md``);
- ``invocation``: one ``wsbench gate``: which gates, measure, judge or update, write.

The command line glue is in ``wsbench.commands.gate`` (parsed in ``wsbench.cli``).
"""
