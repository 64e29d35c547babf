/*
 * The soak kinds (clients/README.md, "cycles" and "pinghold"): what a server or this
 * client keeps of connections that came and went, read by the harness at marks.
 *
 * cycles: --count connect–echo–close cycles in batches of --connections: every
 * connection of a batch is opened at once (cap.c), sends one message of --size bytes
 * (--type text or binary) and takes its echo (compared whole), then closes cleanly
 * (our close 1000, the server's close, the end of TCP); the next batch starts when
 * the whole batch is closed. "WSBENCH-MARK cycles-<done>" at the start (cycles-0)
 * and after every batch that ends one --marks-th of the run (the last batch
 * always), with no connection open: the harness reads both sides' memory and
 * descriptors there. A connection that fails to open, loses its echo or does not
 * close with 1000 fails the run, named.
 *
 * pinghold: --connections opened (--concurrency at a time), held --hold-ms with a
 * ping on each every --ping-ms (spread over the interval), "WSBENCH-MARK t-<ms>"
 * every --mark-ms from the start of the hold (t-0 first); every pong must come
 * back. Then the result line and the end barrier.
 */
#include "cap.h"
#include "conn.h"
#include "kinds.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CYCLE_WAIT_NS 10000000000u	/* for a batch's echoes, then for its closes */
#define PONG_WAIT_NS 2000000000u
#define MIN_WAKE_NS 1000000u

static struct {
	struct cap_conn **live;
	unsigned n;
	unsigned char *payload;	/* what every connection sends */
	size_t size;
	int opcode;
	uint64_t echoes, closed, deadline;
	int closing;
	char problem[320];
} S;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void problem(const char *fmt, ...)
{
	va_list ap;

	if (*S.problem)
		return;
	va_start(ap, fmt);
	vsnprintf(S.problem, sizeof(S.problem), fmt, ap);
	va_end(ap);
}

static void on_data(struct cap_conn *cc, const unsigned char *p, size_t len)
{
	uint64_t off = cc->c.msg_len - len;	/* conn.c counts the chunk before handing it over */
	size_t i;
	char n[32];

	for (i = 0; i < len && off + i < S.size; i++)
		if (p[i] != S.payload[off + i]) {
			problem("echo on connection %s differs at byte %llu: got 0x%02x, sent 0x%02x",
				thousands(cc->number, n), (unsigned long long)(off + i), p[i],
				S.payload[off + i]);
			return;
		}
}

static void on_message(struct cap_conn *cc, int opcode, uint64_t len)
{
	char n[32];

	if (cc->alive)
		problem("connection %s received a second message (%llu bytes)", thousands(cc->number, n),
			(unsigned long long)len);
	else if (opcode != S.opcode || len != S.size)
		problem("echo on connection %s is %s of %llu bytes, sent %s of %zu",
			thousands(cc->number, n), opcode == OP_TEXT ? "text" : "binary",
			(unsigned long long)len, S.opcode == OP_TEXT ? "text" : "binary", S.size);
	cc->alive = 1;
	S.echoes++;
}

static void on_gone(struct cap_conn *cc, const char *why)
{
	char n[32];

	if (S.closing && cc->c.close_code == 1000) {
		S.closed++;
		return;
	}
	problem("connection %s: %s%s", thousands(cc->number, n), why,
		S.closing ? " (closing)" : " (before its echo)");
	if (S.closing)
		S.closed++;
}

static const struct cap_hooks hooks = { .on_data = on_data, .on_message = on_message, .on_gone = on_gone };

static int echoes_in(void *x)
{
	(void)x;
	return S.echoes >= S.n || *S.problem || now_ns() >= S.deadline;
}

static int closes_in(void *x)
{
	(void)x;
	return S.closed >= S.n || now_ns() >= S.deadline;
}

/* One batch of `b` cycles; cycles before it: `done` (for the messages). */
static void batch(const struct opts *o, unsigned b, uint64_t done)
{
	struct cap_result res;
	char n[32], m[32];
	unsigned i;

	S.live = cap_open(o, b, &hooks, &res, &S.n);
	if (*res.limit || S.n < b)
		fail("cycle %s: %s", thousands(done + S.n + 1, n), *res.limit ? res.limit : "fewer connections opened");
	S.echoes = S.closed = 0;
	S.closing = 0;
	evloop_phase("cycles %s to %s: echoes", thousands(done + 1, n), thousands(done + b, m));
	for (i = 0; i < S.n; i++)
		conn_send_frame(&S.live[i]->c, S.opcode, S.payload, S.size);
	S.deadline = now_ns() + CYCLE_WAIT_NS;
	evloop_wake_at(S.deadline);
	evloop_run(echoes_in, NULL, NULL);
	if (*S.problem)
		fail("%s", S.problem);
	if (S.echoes < S.n)
		fail("cycles %s to %s: %s echoes of %u came back within %.0f s", thousands(done + 1, n),
		     thousands(done + b, m), thousands(S.echoes, n), S.n, CYCLE_WAIT_NS / 1e9);
	evloop_phase("cycles %s to %s: close", thousands(done + 1, n), thousands(done + b, m));
	S.closing = 1;
	for (i = 0; i < S.n; i++)
		conn_close(&S.live[i]->c, 1000);
	S.deadline = now_ns() + CYCLE_WAIT_NS;
	evloop_wake_at(S.deadline);
	evloop_run(closes_in, NULL, NULL);
	evloop_wake_at(0);
	if (*S.problem)
		fail("%s", S.problem);
	if (S.closed < S.n)
		fail("cycles %s to %s: %s of %u connections closed within %.0f s", thousands(done + 1, n),
		     thousands(done + b, m), thousands(S.closed, n), S.n, CYCLE_WAIT_NS / 1e9);
	cap_close_all();	/* every one is done: frees them */
}

void run_cycles(const struct opts *o)
{
	struct opts oo = *o;
	uint64_t done = 0, every, batches, k = 0, t0;
	unsigned marks = 0;
	char name[48], extra[256];
	double s;
	size_t i;

	memset(&S, 0, sizeof(S));
	S.size = o->size;
	S.opcode = o->binary ? OP_BINARY : OP_TEXT;
	S.payload = xmalloc(S.size ? S.size : 1);
	for (i = 0; i < S.size; i++)	/* printable, so also valid UTF-8 as text */
		S.payload[i] = (unsigned char)('a' + i % 26);
	oo.concurrency = o->connections;	/* a batch opens at once */
	batches = (o->count + o->connections - 1) / o->connections;
	every = (batches + o->marks - 1) / o->marks;

	start_barrier();
	t0 = now_ns();
	mark("cycles-0");
	marks++;
	while (done < o->count) {
		unsigned b = o->count - done < o->connections ? (unsigned)(o->count - done) : o->connections;

		batch(&oo, b, done);
		done += b;
		if (++k % every == 0 || done == o->count) {
			snprintf(name, sizeof(name), "cycles-%llu", (unsigned long long)done);
			mark(name);
			marks++;
		}
	}
	s = (double)(now_ns() - t0) / 1e9;
	free(S.payload);
	snprintf(extra, sizeof(extra),
		 ", \"cycles\": %llu, \"batch\": %u, \"marks\": %u, \"cycles_per_s\": %.3f",
		 (unsigned long long)done, o->connections, marks, s > 0 ? (double)done / s : 0.0);
	print_result(done, done * S.size, s, 0, extra);
}

/* pinghold */
static struct {
	struct cap_conn **live;
	unsigned n, lost;
	uint64_t t0, hold_ns, ping_ns, cursor, pings, deadline;
	unsigned char ping[FRAME_HEADER_MAX + 7];
	size_t ping_len;
	char lost_first[256];
} H;

static void hold_gone(struct cap_conn *cc, const char *why)
{
	char n[32];

	H.lost++;
	if (!*H.lost_first)
		snprintf(H.lost_first, sizeof(H.lost_first), "connection %s: %s", thousands(cc->number, n), why);
}

static void hold_message(struct cap_conn *cc, int opcode, uint64_t len)
{
	char n[32];

	(void)opcode;
	fail("connection %s received an unexpected message of %llu bytes while held",
	     thousands(cc->number, n), (unsigned long long)len);
}

static const struct cap_hooks hold_hooks = { .on_message = hold_message, .on_gone = hold_gone };

static uint64_t H_until;	/* the loop runs until this time (the next mark, or the end) */

/* Every ping due by now (ping i goes to connection i mod n at t0 + i*P/n). */
static void hold_tick(void *x)
{
	uint64_t now = now_ns(), due, next;

	(void)x;
	if (!H.ping_ns || now >= H_until) {
		evloop_wake_at(H_until);
		return;
	}
	due = (uint64_t)(((unsigned __int128)(now - H.t0) * H.n) / H.ping_ns) + 1;
	for (; H.cursor < due; H.cursor++) {
		struct cap_conn *cc = H.live[H.cursor % H.n];

		if (cc->gone)
			continue;
		conn_send_ref(&cc->c, H.ping, H.ping_len);
		H.pings++;
	}
	next = H.t0 + (uint64_t)(((unsigned __int128)H.cursor * H.ping_ns + H.n - 1) / H.n);
	if (next < now + MIN_WAKE_NS)
		next = now + MIN_WAKE_NS;
	if (next > H_until)
		next = H_until;
	evloop_wake_at(next);
}

static int until_reached(void *x)
{
	(void)x;
	return now_ns() >= H_until;
}

static int pongs_in(void *x)
{
	(void)x;
	return cap_pongs() >= H.pings || now_ns() >= H.deadline;
}

void run_pinghold(const struct opts *o)
{
	struct cap_result res;
	uint64_t mark_ns = o->mark_ms * 1000000u, at;
	unsigned marks = 0;
	char name[48], extra[768], n[32];
	double hold_s;

	memset(&H, 0, sizeof(H));
	H.hold_ns = o->hold_ms * 1000000u;
	H.ping_ns = o->ping_ms * 1000000u;
	H.ping_len = frame_build(H.ping, OP_PING, "wsbench", 7);
	H.live = cap_open(o, o->connections, &hold_hooks, &res, &H.n);
	if (*res.limit || H.n < o->connections)
		fail("opened %s of %u connections: %s", thousands(H.n, n), o->connections,
		     *res.limit ? res.limit : "?");

	start_barrier();
	evloop_phase("hold, %s connections", thousands(H.n, n));
	H.t0 = now_ns();
	for (at = 0;; at += mark_ns) {
		H_until = H.t0 + (at < H.hold_ns ? at : H.hold_ns);
		evloop_run(until_reached, hold_tick, NULL);
		evloop_wake_at(0);
		snprintf(name, sizeof(name), "t-%llu", (unsigned long long)((now_ns() - H.t0) / 1000000u));
		mark(name);
		marks++;
		if (at >= H.hold_ns)
			break;
	}
	evloop_phase("hold, waiting for the last pongs");
	H.deadline = now_ns() + PONG_WAIT_NS;
	evloop_wake_at(H.deadline);
	evloop_run(pongs_in, NULL, NULL);
	evloop_wake_at(0);
	hold_s = (double)(now_ns() - H.t0) / 1e9;
	if (H.lost)
		fail("%u connections lost while held, first %s", H.lost, H.lost_first);
	if (cap_pongs() < H.pings)
		fail("%llu pongs of %llu pings came back", (unsigned long long)cap_pongs(),
		     (unsigned long long)H.pings);
	snprintf(extra, sizeof(extra),
		 ", \"connections\": %u, \"hold_s\": %.6f, \"pings\": %llu, \"pongs\": %llu, \"marks\": %u",
		 H.n, hold_s, (unsigned long long)H.pings, (unsigned long long)cap_pongs(), marks);
	print_result(H.pings, 0, hold_s, 0, extra);
	evloop_end_barrier();
	cap_close_all();
}
