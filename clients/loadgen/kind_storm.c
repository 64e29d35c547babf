/*
 * storm: a reconnect storm (issue 34, part 4). --connections N are opened as
 * idle's are (cap.c: at most --concurrency handshakes in flight, from
 * --sources addresses) and each is checked with one echo. After the start
 * barrier, "WSBENCH-MARK before" (the harness reads the server's CPU and
 * memory); then every connection is closed at once, cleanly (a close frame
 * 1000 each, as clients do when a deploy drains them), and each reconnects as
 * soon as its close has completed (the server's close and the end of TCP):
 * no cap on the handshakes in flight, every reconnection from the source
 * address its connection had. A connection is back when its upgrade completed
 * and one echo came back whole. When every connection is back or given up:
 * "WSBENCH-MARK storm"; then --settle-ms with nothing sent, and
 * "WSBENCH-MARK after".
 *
 * A reconnection that fails is not retried; it is counted by reason:
 * refused (ECONNREFUSED), reset (ECONNRESET or EPIPE), closed (the server
 * closed it before the upgrade or before the echo), bad_upgrade (an answer
 * that is not a valid 101), other; timed_out: still in flight (the old
 * connection's close, the new one's connect, upgrade or echo) when nothing
 * progressed for --stall-ms. The first failure of each reason is told.
 *
 * Beside them, the kernel's counters of this network namespace over the storm
 * (/proc/net/netstat, TcpExt; anything else on the machine's loopback counts
 * too): ListenOverflows (a SYN or a handshake's last ACK dropped with the
 * accept queue full: the client's kernel sends it again after 1 s, 3 s, ...;
 * each retry counted), ListenDrops, and TCPReqQFullDoCookies (SYN cookies
 * sent, the SYN queue full).
 */
#include "cap.h"
#include "conn.h"
#include "kinds.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ECHO_WAIT_NS 10000000000u	/* the echo check before the storm */
#define CLOSE_WAIT_NS 1000000000u	/* the close handshakes after the end barrier */

static const char PROBE[] = "wsbench-storm";
#define PROBE_LEN (sizeof(PROBE) - 1)

enum why { W_REFUSED, W_RESET, W_CLOSED, W_BAD_UPGRADE, W_OTHER, W_TIMED_OUT, W_N };
static const char *const why_key[W_N] = { "refused", "reset", "closed", "bad_upgrade", "other", "timed_out" };

/* a connection's place in the storm (slot i: the connection numbered i + 1) */
enum stage { S_OPEN, S_CLOSING, S_CONNECTING, S_ECHO, S_BACK, S_FAILED };

struct slot {
	enum stage stage;
	struct cap_conn *old;	/* the connection opened before the storm */
	struct conn c;		/* the reconnection */
	uint64_t t_back;	/* since the storm began */
};

/* TcpExt counters read at the marks before and storm */
static const char *const tcpext_name[] = { "ListenOverflows", "ListenDrops", "TCPReqQFullDoCookies" };
static const char *const tcpext_key[] = { "listen_overflows", "listen_drops", "syn_cookies" };
#define N_TCPEXT (sizeof(tcpext_name) / sizeof(tcpext_name[0]))

static struct {
	const struct opts *o;
	struct cap_conn **live;
	unsigned n;
	struct slot *slot;
	unsigned checked, closed, back, failed, counts[W_N];
	int storm;
	uint64_t t0, t_closed, t_back, last_progress, stall_ns;
	unsigned char frame[FRAME_HEADER_MAX + PROBE_LEN];	/* one masked probe, sent by reference */
	size_t frame_len;
	char first[W_N][200];
	char unexpected[256];
} S;

/* The TcpExt counters now (-1 each where /proc/net/netstat does not say). */
static void tcpext(long long out[N_TCPEXT])
{
	char names[8192], values[8192], *np, *vp, *n, *v;
	FILE *f = fopen("/proc/net/netstat", "r");
	unsigned i;

	for (i = 0; i < N_TCPEXT; i++)
		out[i] = -1;
	if (!f)
		return;
	while (fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
		if (strncmp(names, "TcpExt:", 7))
			continue;
		n = strtok_r(names, " \n", &np);
		v = strtok_r(values, " \n", &vp);
		while ((n = strtok_r(NULL, " \n", &np)) && (v = strtok_r(NULL, " \n", &vp)))
			for (i = 0; i < N_TCPEXT; i++)
				if (!strcmp(n, tcpext_name[i]))
					out[i] = atoll(v);
		break;
	}
	fclose(f);
}

static void progress(void)
{
	S.last_progress = now_ns();
}

static int is_probe(const struct conn *c, int opcode, uint64_t len)
{
	return opcode == OP_TEXT && len == PROBE_LEN && !memcmp(c->msg_head, PROBE, 8);
}

static void unexpected(unsigned number, int opcode, uint64_t len)
{
	char n[32];

	if (!*S.unexpected)
		snprintf(S.unexpected, sizeof(S.unexpected),
			 "connection %s received an unexpected %s message of %llu bytes",
			 thousands(number, n), opcode == OP_TEXT ? "text" : "binary", (unsigned long long)len);
}

static void count_failure(unsigned i, enum why w, const char *why)
{
	char n[32];

	S.slot[i].stage = S_FAILED;
	S.failed++;
	S.counts[w]++;
	if (!*S.first[w])
		snprintf(S.first[w], sizeof(S.first[w]), "connection %s: %s", thousands(i + 1, n), why);
	progress();
}

/* The reason a reconnection failed, from conn.c's words. */
static enum why classify(const char *why)
{
	if (strstr(why, strerror(ECONNREFUSED)))
		return W_REFUSED;
	if (strstr(why, strerror(ECONNRESET)) || strstr(why, strerror(EPIPE)))
		return W_RESET;
	if (strstr(why, "upgrade failed"))
		return W_BAD_UPGRADE;
	if (strstr(why, "without a close frame"))
		return W_CLOSED;
	return W_OTHER;
}

/* --- the reconnections ------------------------------------------------------ */

static unsigned storm_slot(const struct conn *c)
{
	return (unsigned)((const struct slot *)c->user - S.slot);
}

static void new_open(struct conn *c)
{
	S.slot[storm_slot(c)].stage = S_ECHO;
	conn_send_ref(c, S.frame, S.frame_len);
	progress();
}

static void new_message(struct conn *c, int opcode, uint64_t len)
{
	unsigned i = storm_slot(c);
	uint64_t now = now_ns();

	if (S.slot[i].stage != S_ECHO || !is_probe(c, opcode, len)) {
		unexpected(i + 1, opcode, len);
		return;
	}
	S.slot[i].stage = S_BACK;
	S.slot[i].t_back = now - S.t0;
	S.back++;
	S.t_back = now;
	progress();
}

static void new_error(struct conn *c, const char *why)
{
	unsigned i = storm_slot(c);

	if (S.slot[i].stage == S_CONNECTING || S.slot[i].stage == S_ECHO)
		count_failure(i, classify(why), why);
}

static void new_closed(struct conn *c)
{
	unsigned i = storm_slot(c);
	char why[96];

	if (S.slot[i].stage != S_CONNECTING && S.slot[i].stage != S_ECHO)
		return;
	snprintf(why, sizeof(why), "closed by the server %s (code %d)",
		 S.slot[i].stage == S_ECHO ? "before the echo" : "during the handshake", c->close_code);
	count_failure(i, W_CLOSED, why);
}

static const struct conn_ops new_ops = {
	.on_open = new_open,
	.on_message = new_message,
	.on_error = new_error,
	.on_closed = new_closed,
};

/* The old connection's close completed: reconnect at once, from its source address. */
static void reconnect(unsigned i)
{
	const char *what = "";
	char why[160];

	S.slot[i].stage = S_CONNECTING;
	if (conn_open(&S.slot[i].c, &S.o->url, cap_source(i + 1), &new_ops, &S.slot[i], &what)) {
		snprintf(why, sizeof(why), "%s: %s", what, strerror(errno));
		count_failure(i, errno == ECONNREFUSED ? W_REFUSED : W_OTHER, why);
	}
}

/* --- the connections opened before the storm ------------------------------- */

static void old_message(struct cap_conn *cc, int opcode, uint64_t len)
{
	if (S.storm || cc->alive || !is_probe(&cc->c, opcode, len)) {
		unexpected(cc->number, opcode, len);
		return;
	}
	cc->alive = 1;
	S.checked++;
}

/* Closed (by our close, or by the server) or failed: before the storm that fails the run;
 * in it, the connection is done with and reconnects. */
static void old_gone(struct cap_conn *cc, const char *why)
{
	unsigned i = cc->number - 1;
	char n[32];

	if (!S.storm)
		fail("connection %s was lost before the storm: %s", thousands(cc->number, n), why);
	if (S.slot[i].stage != S_CLOSING)
		return;
	S.closed++;
	if (S.closed == S.n)
		S.t_closed = now_ns();
	progress();
	reconnect(i);
}

static const struct cap_hooks hooks = { .on_message = old_message, .on_gone = old_gone };

static int checked_in(void *x)
{
	(void)x;
	return S.checked >= S.n || *S.unexpected || now_ns() >= S.last_progress + ECHO_WAIT_NS;
}

static int storm_over(void *x)
{
	(void)x;
	return S.back + S.failed >= S.n || *S.unexpected;
}

/* Nothing progressed for --stall-ms: what is still in flight is given up (timed out). */
static void storm_tick(void *x)
{
	uint64_t now = now_ns();
	unsigned i;

	(void)x;
	if (S.back + S.failed >= S.n)
		return;
	if (now - S.last_progress < S.stall_ns) {
		evloop_wake_at(S.last_progress + S.stall_ns);
		return;
	}
	for (i = 0; i < S.n; i++) {
		enum stage st = S.slot[i].stage;
		char why[96];

		if (st != S_CLOSING && st != S_CONNECTING && st != S_ECHO)
			continue;
		snprintf(why, sizeof(why), "%s after %.1f s without progress",
			 st == S_CLOSING ? "its close was not answered" :
			 st == S_CONNECTING ? "no upgrade" : "no echo", (double)S.stall_ns / 1e9);
		conn_free(st == S_CLOSING ? &S.slot[i].old->c : &S.slot[i].c);
		count_failure(i, W_TIMED_OUT, why);
	}
	evloop_wake_at(0);
}

static int settled(void *x)
{
	return now_ns() >= *(uint64_t *)x;
}

/* After the end barrier: every reconnection's close handshake done, or the bound passed. */
static int all_done(void *x)
{
	unsigned i;

	for (i = 0; i < S.n; i++)
		if (S.slot[i].c.state != C_DONE)
			return settled(x);
	return 1;
}

/* Each slot's time back, sorted: the p-th fraction (0 with none back). */
static double quantile_s(uint64_t *t, unsigned n, double p)
{
	unsigned k;

	if (!n)
		return 0.0;
	k = (unsigned)(p * (double)(n - 1) + 0.5);
	return (double)t[k] / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void append(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void append(char *out, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(out);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out + len, cap - len, fmt, ap);
	va_end(ap);
}

void run_storm(const struct opts *o)
{
	struct cap_result res;
	char extra[3072], n[32], s[32];
	uint64_t *times, until;
	long long kernel0[N_TCPEXT], kernel1[N_TCPEXT];
	unsigned i, k;
	double storm_s;

	memset(&S, 0, sizeof(S));
	S.o = o;
	S.stall_ns = o->stall_ms * 1000000u;
	S.frame_len = frame_build(S.frame, OP_TEXT, PROBE, PROBE_LEN);
	S.live = cap_open(o, o->connections, &hooks, &res, &S.n);
	if (S.n < o->connections)
		fail("only %s of %s connections opened before the storm: %s", thousands(S.n, n),
		     thousands(o->connections, s), *res.limit ? res.limit : "?");
	S.slot = xcalloc(S.n, sizeof(*S.slot));
	for (i = 0; i < S.n; i++) {
		S.slot[S.live[i]->number - 1].old = S.live[i];
		S.slot[i].c.fd = -1;	/* nothing to free until it reconnects */
		S.slot[i].c.state = C_DONE;
	}

	evloop_phase("echo check on each of %u connections", S.n);
	for (i = 0; i < S.n; i++)
		conn_send_ref(&S.live[i]->c, S.frame, S.frame_len);
	progress();
	evloop_wake_at(S.last_progress + ECHO_WAIT_NS);
	evloop_run(checked_in, NULL, NULL);
	evloop_wake_at(0);
	if (*S.unexpected)
		fail("%s", S.unexpected);
	if (S.checked < S.n)
		fail("only %s of %s echoes came back before the storm", thousands(S.checked, n), thousands(S.n, s));

	start_barrier();
	mark("before");
	tcpext(kernel0);

	evloop_phase("storm: %s connections closed and reopened", thousands(S.n, n));
	S.storm = 1;
	S.t0 = now_ns();
	progress();
	for (i = 0; i < S.n; i++) {
		S.slot[i].stage = S_CLOSING;
		conn_close(&S.slot[i].old->c, 1000);
	}
	evloop_run(storm_over, storm_tick, NULL);
	evloop_wake_at(0);
	if (*S.unexpected)
		fail("%s", S.unexpected);
	storm_s = S.back ? (double)(S.t_back - S.t0) / 1e9 : 0.0;
	tcpext(kernel1);

	mark("storm");
	evloop_phase("settle, %llu ms", (unsigned long long)o->settle_ms);
	until = now_ns() + o->settle_ms * 1000000u;
	evloop_wake_at(until);
	evloop_run(settled, NULL, &until);
	evloop_wake_at(0);
	mark("after");

	times = xcalloc(S.n, sizeof(*times));
	for (i = k = 0; i < S.n; i++)
		if (S.slot[i].stage == S_BACK)
			times[k++] = S.slot[i].t_back;
	qsort(times, k, sizeof(*times), cmp_u64);
	extra[0] = 0;
	append(extra, sizeof(extra),
	       ", \"connections\": %u, \"open_s\": %.6f, \"concurrency\": %u, \"sources\": %u"
	       ", \"storm_s\": %.6f, \"closed_s\": %.6f, \"back\": %u, \"failed\": %u"
	       ", \"back_p50_s\": %.6f, \"back_p99_s\": %.6f, \"settle_s\": %.3f",
	       S.n, res.seconds, o->concurrency, o->sources, storm_s,
	       S.t_closed ? (double)(S.t_closed - S.t0) / 1e9 : 0.0, S.back, S.failed,
	       quantile_s(times, k, 0.5), quantile_s(times, k, 0.99), (double)o->settle_ms / 1e3);
	free(times);
	for (i = 0; i < W_N; i++)
		append(extra, sizeof(extra), ", \"%s\": %u", why_key[i], S.counts[i]);
	for (i = 0; i < N_TCPEXT; i++)
		if (kernel0[i] >= 0 && kernel1[i] >= 0)
			append(extra, sizeof(extra), ", \"%s\": %lld", tcpext_key[i], kernel1[i] - kernel0[i]);
	for (i = 0; i < W_N; i++)
		if (*S.first[i]) {
			char q[256];

			json_string(q, sizeof(q), S.first[i]);
			append(extra, sizeof(extra), ", \"first_%s\": %s", why_key[i], q);
		}
	print_result(S.back, (uint64_t)S.back * PROBE_LEN, storm_s, 0, extra);
	evloop_end_barrier();	/* connections open until the harness's end readings */
	evloop_phase("close");
	for (i = 0; i < S.n; i++)
		if (S.slot[i].stage == S_BACK)
			conn_close(&S.slot[i].c, 1000);
	until = now_ns() + CLOSE_WAIT_NS;
	evloop_wake_at(until);
	evloop_run(all_done, NULL, &until);
	evloop_wake_at(0);
	for (i = 0; i < S.n; i++)
		conn_free(&S.slot[i].c);
	free(S.slot);
	cap_close_all();
}
