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
- cell: profiling one cell end to end; hyperfine: start-up cost through hyperfine;
- profiling: which cells, profiled one after the other, start-up times, the results file;
- views: the profiles and start-up figures as document sections (rendered by the report's
  exporters).

Layering: these modules import the harness's lower modules (procs, measure, server,
catalog, model, doc, the report's exporters), never cli or commands; within the package,
cell, hyperfine and profiling sit on top.
"""
