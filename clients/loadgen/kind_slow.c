/*
 * slow: --connections N subscribers on /broadcast (servers/README.md), of which
 * the last --slow K stop reading at the start barrier: their receive buffer is
 * --rcvbuf bytes (SO_RCVBUF, set before connect()) and their sockets leave the
 * event loop, so the server's sends to them back up; their connections stay
 * open. Subscriber 1 publishes, as in the fanout kind (stamp.h): --rate
 * messages per second of --size bytes for --duration-ms, open loop, each with
 * its number and due time. Every second from GO the kind prints a mark
 * (WSBENCH-MARK t1, t2, ...: the harness reads the server's memory and CPU).
 *
 * The healthy subscribers (the first N - K, the publisher included) are timed
 * as in the fanout kind (arrival minus due time: no coordinated omission); a
 * message missing, duplicated or out of order to them is counted and reported
 * in the result line, not a failure of the run. Once the last message was due
 * and the healthy ones have it (or 1 s later), the slow subscribers read again
 * and drain their sockets for at most --drain-ms: what each got (messages,
 * bytes on the wire, the numbers it missed), whether a close frame came and
 * with which code, and how TCP ended (a FIN, a reset, or still open), read from
 * the wire, are the result's "slow_subscribers". While they do not read, their
 * TCP state is polled every 100 ms: a server that resets or closes them then is
 * seen at that time ("tcp_state_s").
 */
#include "cap.h"
#include "conn.h"
#include "histogram.h"
#include "kinds.h"
#include "stamp.h"
#include "util.h"

#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define POLL_NS 100000000u		/* TCP state of the paused ones */
#define MARK_NS 1000000000u		/* a mark every second */
#define HEALTHY_WAIT_NS 1000000000u	/* before the slow ones read again */
#define DRAIN_RCVBUF (4 << 20)		/* their receive buffer then */

enum phase { PUBLISH, SETTLE, DRAIN };

struct slow_sub {
	uint64_t messages, payload, wire, missed, gaps, first, last;
	int got_any, gone, close_code, tcp_state;
	double tcp_state_s;	/* when the polled state first left ESTABLISHED, or < 0 */
	char why[160];
};

static struct {
	struct cap_conn **by;	/* the connections by number (cap_open's are in the order they opened) */
	unsigned n, k, healthy, complete, slow_rcvbuf;
	uint64_t drain_ns;
	uint64_t count, size, sent;
	uint64_t delivered, lost, duplicated, disorder;
	double interval_ns;
	uint64_t t0, t_last, t_complete, next_mark, next_poll, settle_end, drain_end;
	unsigned marks;
	enum phase phase;
	size_t backlog_max;	/* bytes the publisher had queued and not written, at most */
	unsigned char *payload;
	struct histogram hist;
	struct slow_sub *slow;	/* K of them: subscribers N - K + 1 ... N */
	char first[384];	/* the first healthy delivery missing, duplicated or out of order */
} S;

static uint64_t due(uint64_t i)
{
	return S.t0 + (uint64_t)llround((double)i * S.interval_ns);
}

static struct slow_sub *slow_of(const struct cap_conn *cc)
{
	return cc->number > S.healthy ? &S.slow[cc->number - S.healthy - 1] : NULL;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...)
{
	va_list ap;

	if (*S.first)
		return;
	va_start(ap, fmt);
	vsnprintf(S.first, sizeof(S.first), fmt, ap);
	va_end(ap);
}

static size_t frame_header_len(uint64_t len)
{
	return len < 126 ? 2 : len < 65536 ? 4 : 10;
}

static void before_start(unsigned number)
{
	conn_set_rcvbuf(number > S.healthy ? (int)S.slow_rcvbuf : 0);
}

static void on_data(struct cap_conn *cc, const unsigned char *p, size_t n)
{
	size_t take = STAMP_BYTES - cc->nfirst;

	if (take > n)
		take = n;
	memcpy(cc->first + cc->nfirst, p, take);
	cc->nfirst += (unsigned)take;
}

/* A slow subscriber's message, while it drains: counted, its gaps noted. */
static void slow_message(struct slow_sub *s, uint64_t seq, uint64_t len, struct cap_conn *cc)
{
	s->messages++;
	s->payload += len;
	s->wire += frame_header_len(len) + len;
	if (!s->got_any) {
		s->first = seq;
		s->got_any = 1;
	} else if (seq > cc->next) {
		s->gaps++;
		s->missed += seq - cc->next;
	}
	if (seq >= cc->next) {
		cc->next = seq + 1;
		s->last = seq;
	}
}

static void on_message(struct cap_conn *cc, int opcode, uint64_t len)
{
	struct slow_sub *s = slow_of(cc);
	uint64_t now = now_ns(), seq, t;
	char a[32], b[32], c[32];

	if (opcode != OP_BINARY || len != S.size || cc->nfirst < STAMP_BYTES ||
	    (seq = stamp_le64(cc->first)) >= S.count) {
		cc->nfirst = 0;
		S.disorder++;
		note("subscriber %s received a message that is not one of the %s published "
		     "(%s, %llu bytes)", thousands(cc->number, a), thousands(S.count, b),
		     opcode == OP_TEXT ? "text" : "binary", (unsigned long long)len);
		return;
	}
	t = stamp_le64(cc->first + 8);
	cc->nfirst = 0;
	if (s) {
		slow_message(s, seq, len, cc);
		return;
	}
	if (seq < cc->next) {
		if (seq + 1 == cc->next)
			S.duplicated++;
		else
			S.disorder++;
		note("subscriber %s received message %s again or out of order (after message %s)",
		     thousands(cc->number, a), thousands(seq + 1, b), thousands(cc->next, c));
		return;
	}
	if (seq > cc->next) {
		S.lost += seq - cc->next;
		note("message %s never reached subscriber %s (it received message %s next)",
		     thousands(cc->next + 1, a), thousands(cc->number, b), thousands(seq + 1, c));
	}
	cc->next = seq + 1;
	S.delivered++;
	hist_record(&S.hist, now > t ? now - t : 0);
	S.t_last = now;
	if (cc->next == S.count && ++S.complete == S.healthy)
		S.t_complete = now;
}

static void on_gone(struct cap_conn *cc, const char *why)
{
	struct slow_sub *s = slow_of(cc);
	char a[32];

	if (!s) {
		if (cc->next < S.count)
			note("subscriber %s (healthy) was lost: %s", thousands(cc->number, a), why);
		if (cc->number == 1 && S.sent < S.count)
			fail("the publisher (subscriber 1) was lost after %llu of %llu messages: %s",
			     (unsigned long long)S.sent, (unsigned long long)S.count, why);
		return;
	}
	s->gone = 1;
	/* a close frame's code (conn.c keeps it); 0: none came */
	s->close_code = cc->c.close_code && cc->c.close_code != 1006 ? cc->c.close_code : 0;
	snprintf(s->why, sizeof(s->why), "%s", why);
}

static const struct cap_hooks hooks = {
	.on_data = on_data, .on_message = on_message, .on_gone = on_gone,
	.before_start = before_start,
};

/* The TCP state of each slow subscriber that does not read: the first change is kept. */
static void poll_states(uint64_t now)
{
	unsigned i;

	for (i = 0; i < S.k; i++) {
		struct cap_conn *cc = S.by[S.healthy + i];
		struct slow_sub *s = &S.slow[i];
		struct tcp_info ti;
		socklen_t len = sizeof(ti);

		if (s->tcp_state || cc->c.fd < 0 ||
		    getsockopt(cc->c.fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
			continue;
		if (ti.tcpi_state != TCP_ESTABLISHED) {
			s->tcp_state = ti.tcpi_state;
			s->tcp_state_s = (double)(now - S.t0) / 1e9;
		}
	}
}

static size_t backlog(const struct conn *c)
{
	size_t i, sum = 0;

	for (i = 0; i < c->qcount; i++)
		sum += c->q[(c->qhead + i) & (c->qcap - 1)].len;
	return sum - (c->qcount ? c->off : 0);
}

/* The slow ones read again, with a receive buffer that lets them drain at once. */
static void resume_slow(void)
{
	int big = DRAIN_RCVBUF;
	unsigned i;

	for (i = 0; i < S.k; i++) {
		struct conn *c = &S.by[S.healthy + i]->c;

		if (c->fd >= 0)
			setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
		conn_pause_reading(c, 0);
	}
}

static int healthy_done(void)
{
	return S.complete >= S.healthy;
}

static int slow_done(void)
{
	unsigned i;

	for (i = 0; i < S.k; i++)
		if (!S.slow[i].gone && S.by[S.healthy + i]->next < S.count)
			return 0;
	return 1;
}

static void tick(void *x)
{
	uint64_t now = now_ns(), wake;
	char name[32];
	size_t q;

	(void)x;
	while (S.sent < S.count && due(S.sent) <= now) {
		stamp_put(S.payload, S.sent, due(S.sent));
		conn_send_frame(&S.by[0]->c, OP_BINARY, S.payload, S.size);
		S.sent++;
	}
	q = backlog(&S.by[0]->c);
	if (q > S.backlog_max)
		S.backlog_max = q;
	if (now >= S.next_mark) {
		snprintf(name, sizeof(name), "t%u", ++S.marks);
		mark(name);
		S.next_mark += MARK_NS;
		now = now_ns();
	}
	if (S.phase != DRAIN && now >= S.next_poll) {
		poll_states(now);
		S.next_poll = now + POLL_NS;
	}
	if (S.phase == PUBLISH && S.sent == S.count) {
		S.phase = SETTLE;
		S.settle_end = now + HEALTHY_WAIT_NS;
	}
	if (S.phase == SETTLE && (healthy_done() || now >= S.settle_end)) {
		S.phase = DRAIN;
		S.drain_end = now + S.drain_ns;
		resume_slow();
	}
	wake = S.next_mark;
	if (S.sent < S.count && due(S.sent) < wake)
		wake = due(S.sent);
	if (S.phase != DRAIN && S.next_poll < wake)
		wake = S.next_poll;
	if (S.phase == SETTLE && S.settle_end < wake)
		wake = S.settle_end;
	if (S.phase == DRAIN && S.drain_end < wake)
		wake = S.drain_end;
	evloop_wake_at(wake);
}

static int over(void *x)
{
	(void)x;
	return S.phase == DRAIN && ((healthy_done() && slow_done()) || now_ns() >= S.drain_end);
}

/* What never reached a healthy subscriber, once the wait is over. */
static void count_missing(void)
{
	char a[32], b[32];
	unsigned i;

	for (i = 0; i < S.healthy; i++) {
		struct cap_conn *cc = S.by[i];

		if (cc->next >= S.count)
			continue;
		S.lost += S.count - cc->next;
		note("message %s never reached subscriber %s (%s)", thousands(cc->next + 1, a),
		     thousands(cc->number, b), cc->gone ? "its connection was lost" :
		     "not delivered by the end of the drain");
	}
}

static const char *tcp_state_name(int state)
{
	switch (state) {
	case TCP_CLOSE_WAIT: return "close_wait";
	case TCP_CLOSE: return "closed";
	case TCP_LAST_ACK: return "last_ack";
	case TCP_FIN_WAIT1: return "fin_wait1";
	case TCP_FIN_WAIT2: return "fin_wait2";
	case TCP_TIME_WAIT: return "time_wait";
	case TCP_CLOSING: return "closing";
	default: return "other";
	}
}

/* How TCP ended for a slow subscriber, from what conn.c told (or "open"). */
static const char *tcp_end(const struct slow_sub *s)
{
	if (!s->gone)
		return "open";
	if (strstr(s->why, "reset") || strstr(s->why, "Broken pipe"))
		return "reset";
	return "fin";
}

/* `, "slow_subscribers": [{...}, ...]` into out[cap]. */
static void slow_json(char *out, size_t cap)
{
	size_t len = (size_t)snprintf(out, cap, ", \"slow_subscribers\": [");
	char why[200], code[16], state[64], after[32];
	unsigned i;

	for (i = 0; i < S.k && len < cap; i++) {
		const struct slow_sub *s = &S.slow[i];
		uint64_t got_to = s->got_any ? s->last + 1 : 0;

		json_string(why, sizeof(why), s->why);
		snprintf(code, sizeof(code), s->close_code ? "%d" : "null", s->close_code);
		if (s->tcp_state)
			snprintf(state, sizeof(state), "\"%s\", \"tcp_state_s\": %.3f",
				 tcp_state_name(s->tcp_state), s->tcp_state_s);
		else
			snprintf(state, sizeof(state), "null, \"tcp_state_s\": null");
		if (s->got_any)
			snprintf(after, sizeof(after), "%.3f", (double)(due(s->last) - S.t0) / 1e9);
		else
			snprintf(after, sizeof(after), "null");
		len += (size_t)snprintf(out + len, cap - len,
			"%s{\"subscriber\": %u, \"messages\": %llu, \"payload_bytes\": %llu, "
			"\"wire_bytes\": %llu, \"first\": %llu, \"last\": %llu, \"missed_between\": %llu, "
			"\"gaps\": %llu, \"missing_after\": %llu, \"last_due_s\": %s, \"close_code\": %s, "
			"\"tcp\": \"%s\", \"tcp_state\": %s, \"ended\": %s}",
			i ? ", " : "", S.healthy + i + 1, (unsigned long long)s->messages,
			(unsigned long long)s->payload, (unsigned long long)s->wire,
			(unsigned long long)(s->got_any ? s->first + 1 : 0), (unsigned long long)got_to,
			(unsigned long long)s->missed, (unsigned long long)s->gaps,
			(unsigned long long)(S.count - got_to), after, code, tcp_end(s), state,
			s->gone ? why : "null");
	}
	if (len + 2 < cap)
		snprintf(out + len, cap - len, "]");
}

static void check_path(const struct url *u)
{
	size_t n = strlen("/broadcast");

	if (strncmp(u->target, "/broadcast", n) || (u->target[n] && u->target[n] != '?'))
		fail("--kind slow needs a /broadcast URL (servers/README.md), not %s", u->target);
}

void run_slow(const struct opts *o)
{
	struct cap_result res;
	struct cap_conn **live;
	char keys[512], a[32], b[32], *extra;
	double seconds;
	size_t len, cap;
	unsigned i;

	check_path(&o->url);
	if (o->tls)
		fail("--kind slow runs over ws:// only (its slow subscribers leave the event loop)");
	if (o->slow >= o->connections)
		fail("--slow %u must leave at least the publisher healthy (--connections %u)",
		     o->slow, o->connections);
	memset(&S, 0, sizeof(S));
	S.k = o->slow;
	S.healthy = o->connections - o->slow;
	S.slow_rcvbuf = o->rcvbuf;
	S.size = o->size;
	S.interval_ns = 1e9 / o->rate;
	S.count = (uint64_t)llround(o->rate * (double)o->duration_ms / 1000.0);
	if (!S.count)
		S.count = 1;
	S.drain_ns = o->drain_ms * 1000000u;
	S.payload = xcalloc(1, S.size);
	memset(S.payload + STAMP_BYTES, 'x', S.size - STAMP_BYTES);
	S.slow = xcalloc(S.k ? S.k : 1, sizeof(*S.slow));
	hist_init(&S.hist);

	live = cap_open(o, o->connections, &hooks, &res, &S.n);
	conn_set_rcvbuf(0);	/* the kernel's default for any later connection */
	if (S.n < o->connections) {
		len = (size_t)snprintf(keys, sizeof(keys), ", \"connections\": %u, \"limit\": ", S.n);
		json_string(keys + len, sizeof(keys) - len, res.limit);
		fail_keys(keys, "limit: stopped at %s of %s subscribers: %s", thousands(S.n, a),
			  thousands(o->connections, b), res.limit);
	}

	S.by = xcalloc(S.n, sizeof(*S.by));
	for (i = 0; i < S.n; i++)
		S.by[live[i]->number - 1] = live[i];

	start_barrier();
	S.t0 = now_ns();
	S.next_mark = S.t0 + MARK_NS;
	S.next_poll = S.t0;
	S.phase = PUBLISH;
	for (i = 0; i < S.k; i++)
		conn_pause_reading(&S.by[S.healthy + i]->c, 1);
	evloop_phase("slow consumers: %s subscribers, %s not reading", thousands(S.n, a),
		     thousands(S.k, b));
	evloop_run(over, tick, NULL);
	evloop_wake_at(0);
	count_missing();

	seconds = S.t_last > S.t0 ? (double)(S.t_last - S.t0) / 1e9 : 0.0;
	cap = 4096 + (size_t)S.k * 1024;	/* an entry is at most about 650 bytes */
	extra = xmalloc(cap);
	hist_format_us(&S.hist, true, extra, cap);
	len = strlen(extra);
	len += (size_t)snprintf(extra + len, cap - len,
		", \"subscribers\": %u, \"healthy\": %u, \"slow\": %u, \"sent\": %llu, "
		"\"expected\": %llu, \"delivered\": %llu, \"lost\": %llu, \"duplicated\": %llu, "
		"\"disordered\": %llu, \"complete_s\": ", S.n, S.healthy, S.k,
		(unsigned long long)S.sent, (unsigned long long)S.healthy * S.count,
		(unsigned long long)S.delivered, (unsigned long long)S.lost,
		(unsigned long long)S.duplicated, (unsigned long long)S.disorder);
	len += (size_t)(S.t_complete ? snprintf(extra + len, cap - len, "%.6f",
						(double)(S.t_complete - S.t0) / 1e9)
			: snprintf(extra + len, cap - len, "null"));
	if (*S.first) {
		len += (size_t)snprintf(extra + len, cap - len, ", \"first_problem\": ");
		json_string(extra + len, cap - len, S.first);
		len = strlen(extra);
	}
	len += (size_t)snprintf(extra + len, cap - len,
		", \"rate\": %.3f, \"size\": %llu, \"duration_ms\": %llu, \"rcvbuf\": %u, "
		"\"publisher_backlog_max\": %zu, \"marks_printed\": %u, \"connections\": %u, \"open_s\": %.6f, "
		"\"sources\": %u", o->rate, (unsigned long long)S.size,
		(unsigned long long)o->duration_ms, o->rcvbuf, S.backlog_max, S.marks, S.n,
		res.seconds, o->sources);
	slow_json(extra + len, cap - len);
	print_result(S.delivered, S.delivered * S.size, seconds, 0, extra);
	evloop_end_barrier();	/* connections open until the harness's end readings */
	cap_close_all();
	hist_free(&S.hist);
	free(extra);
	free(S.by);
	free(S.slow);
	free(S.payload);
}
