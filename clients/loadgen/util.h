/* Small helpers shared by every part of the load generator. */
#ifndef LG_UTIL_H
#define LG_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

/* Fill with random bytes from getrandom(2). */
void rand_bytes(void *p, size_t n);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);

/* Print {"error": "..."} (one line), wait for WSBENCH_HOLD, exit 1. */
_Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same with more keys in the error object: `keys` is "" or `, "key": value, ...`. */
_Noreturn void fail_keys(const char *keys, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print {"error": "unsupported: <what>"}, wait for WSBENCH_HOLD, exit 3. */
_Noreturn void fail_unsupported(const char *what);

/*
 * Print WSBENCH-START; with WSBENCH_HOLD=1, then wait for the harness's "GO"
 * line on stdin (it takes its readings in between). The clock starts after.
 */
void start_barrier(void);

/*
 * Print the result line: the common keys, then `extra` (either "" or
 * `, "key": value, ...` already formatted), what result_more() adds if set
 * (the same form), and the closing brace.
 */
extern const char *(*result_more)(void);

void print_result(uint64_t messages, uint64_t bytes, double seconds,
		  uint64_t errors, const char *extra);

/*
 * The mid-phase mark (clients/README.md): print "WSBENCH-MARK <name>"; with
 * WSBENCH_HOLD=1 wait for one line on stdin (any line; end-of-file fails the
 * run) while the harness takes its readings.
 */
void mark(const char *name);

/* `s` as a JSON string (quotes included) into out[cap], cut to fit. */
void json_string(char *out, size_t cap, const char *s);

/* `v` with thousands separators ("19,990") in buf, which is returned. */
const char *thousands(uint64_t v, char buf[32]);

/* With WSBENCH_HOLD=1, read stdin until end-of-file. */
void hold_if_requested(void);

#endif
