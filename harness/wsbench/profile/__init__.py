"""Profiling (``wsbench profile``, ``wsbench startup``), one concern per module:

- tools: finding perf, inferno and hyperfine (a missing one is a one-line error);
- variants: the programs as profiled — the frame-pointer build, the runtimes' flags for
  named JIT frames and for their own CPU profilers;
- jitdump: Bun's JSC jitdump files turned into a perf map;
- record: ``perf record`` on a process, enabled and disabled at the measured phase's edges;
- stacks: reading ``perf script`` output; classify: the one place where frames are
  sorted into kernel, libc, engine, GC, JS, libwebsockets and our C; breakdown: the
  where-the-time-goes table;
- cpuprofile: Chrome ``.cpuprofile`` files as folded stacks;
- flamegraph: folded stacks and SVGs through inferno;
- cell: profiling one cell end to end; startup: start-up cost through hyperfine;
- render: the Markdown of profiles and start-up.

Layering: these modules import the harness's lower modules (procs, measure, server,
catalog, results, doc), never cli or commands; within the package, cell and startup sit on top.
"""
