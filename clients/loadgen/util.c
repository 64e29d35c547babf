#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/*
 * Under valgrind --tool=callgrind --instr-atstart=no (wsbench gate), only the
 * measured phase is instrumented: from GO to the result line. Natively these
 * client requests are a few no-op instructions, run twice per process.
 */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define COUNT_ON() CALLGRIND_START_INSTRUMENTATION
#define COUNT_OFF() CALLGRIND_STOP_INSTRUMENTATION
#endif
#endif
#ifndef COUNT_ON
#define COUNT_ON() ((void)0)
#define COUNT_OFF() ((void)0)
#endif

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rand_bytes(void *p, size_t n)
{
	unsigned char *b = p;

	while (n) {
		ssize_t r = getrandom(b, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			fail("getrandom: %s", strerror(errno));
		}
		b += r;
		n -= (size_t)r;
	}
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fail("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		fail("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fail("out of memory (%zu bytes)", n);
	return p;
}

static int hold_wanted(void)
{
	const char *h = getenv("WSBENCH_HOLD");

	return h && !strcmp(h, "1");
}

void hold_if_requested(void)
{
	static int held;	/* stdin is at end-of-file: the harness let us go */
	char buf[4096];

	if (!hold_wanted() || held)
		return;
	held = 1;
	for (;;) {
		ssize_t r = read(0, buf, sizeof(buf));

		if (r == 0 || (r < 0 && errno != EINTR))
			return;
	}
}

void json_string(char *out, size_t cap, const char *s)
{
	size_t n = 0;

	if (cap < 3)
		fail("json_string: no room");
	out[n++] = '"';
	for (; *s && n + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c < 0x20) {
			n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
		} else {
			out[n++] = (char)c;
		}
	}
	out[n++] = '"';
	out[n] = 0;
}

const char *thousands(uint64_t v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v), i, o = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

/* Print `s` as a JSON string, control characters escaped, on one line. */
static void print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static _Noreturn void fail_with(int code, const char *msg, const char *keys)
{
	fputs("{\"error\": ", stdout);
	print_json_string(msg);
	fputs(keys, stdout);
	fputs("}\n", stdout);
	fflush(stdout);
	hold_if_requested();
	exit(code);
}

void fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail_with(1, msg, "");
}

void fail_keys(const char *keys, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail_with(1, msg, keys);
}

void fail_unsupported(const char *what)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "unsupported: %s", what);
	fail_with(3, msg, "");
}

void start_barrier(void)
{
	char line[64];
	size_t n = 0;

	fputs("WSBENCH-START\n", stdout);
	fflush(stdout);
	if (!hold_wanted())
		return;
	/* byte by byte: nothing after the line is ours to consume */
	for (;;) {
		char ch;
		ssize_t r = read(0, &ch, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fail("start barrier: stdin closed before GO");
		if (ch == '\n')
			break;
		if (n < sizeof(line) - 1)
			line[n++] = ch;
	}
	line[n] = 0;
	if (strcmp(line, "GO"))
		fail("start barrier: expected GO on stdin, got \"%s\"", line);
	COUNT_ON();
}

void mark(const char *name)
{
	char ch;

	printf("WSBENCH-MARK %s\n", name);
	fflush(stdout);
	if (!hold_wanted())
		return;
	/* one line, byte by byte (nothing after it is ours) */
	for (;;) {
		ssize_t r = read(0, &ch, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fail("mark %s: stdin closed before the harness's line", name);
		if (ch == '\n')
			return;
	}
}

const char *(*result_more)(void);

void print_result(uint64_t messages, uint64_t bytes, double seconds,
		  uint64_t errors, const char *extra)
{
	int ok = seconds > 0;

	COUNT_OFF();
	printf("{\"messages\": %llu, \"bytes\": %llu, \"seconds\": %.9f, "
	       "\"msgs_per_s\": %.3f, \"mb_per_s\": %.6f, \"errors\": %llu%s%s}\n",
	       (unsigned long long)messages, (unsigned long long)bytes, seconds,
	       ok ? (double)messages / seconds : 0.0,
	       ok ? (double)bytes / seconds / 1e6 : 0.0,
	       (unsigned long long)errors, extra, result_more ? result_more() : "");
	fflush(stdout);
}
