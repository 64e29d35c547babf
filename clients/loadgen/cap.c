#include "cap.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define CLOSE_WAIT_NS 1000000000u

static struct {
	const struct opts *o;
	const struct cap_hooks *h;
	struct cap_conn *all;	/* every connection started, in order */
	struct cap_conn **live;	/* the opened ones */
	unsigned want, room, started, opened, pending, nlive, closed;
	struct sockaddr_in *src;	/* --sources > 1: 127.0.0.1 ... 127.0.0.K */
	int stopping, closing;
	uint64_t t_first, t_last, last_progress, stall_ns, pongs;
	char limit[CAP_LIMIT_MAX];
} K;

/* The first limit met is the one told. */
static void limit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void limit(const char *fmt, ...)
{
	va_list ap;

	K.stopping = 1;
	if (*K.limit)
		return;
	va_start(ap, fmt);
	vsnprintf(K.limit, sizeof(K.limit), fmt, ap);
	va_end(ap);
}

static unsigned long long nofile(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) ? 0 : (unsigned long long)rl.rlim_cur;
}

/* The first line of a /proc/sys file, blanks made single spaces ("?" if unreadable). */
static const char *sysctl(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t i, o = 0;

	if (!f || !fgets(buf, (int)cap, f)) {
		if (f)
			fclose(f);
		snprintf(buf, cap, "?");
		return buf;
	}
	fclose(f);
	for (i = 0; buf[i] && buf[i] != '\n'; i++) {
		if (buf[i] == '\t' || buf[i] == ' ') {
			if (o && buf[o - 1] != ' ')
				buf[o++] = ' ';
		} else {
			buf[o++] = buf[i];
		}
	}
	buf[o] = 0;
	return buf;
}

/* A call that failed while starting connection `number`: the limit in one line. */
static void start_failed(const char *what, int err, unsigned number)
{
	char n[32], sys[64], to[32];

	thousands(number, n);
	snprintf(to, sizeof(to), "%s:%u", inet_ntoa(K.o->url.addr.sin_addr),
		 ntohs(K.o->url.addr.sin_port));
	if (err == EMFILE) {
		limit("%s: %s (RLIMIT_NOFILE %llu) at connection %s", what, strerror(err),
		      nofile(), n);
	} else if (err == ENFILE) {
		limit("%s: %s (fs.file-max %s) at connection %s", what, strerror(err),
		      sysctl("/proc/sys/fs/file-max", sys, sizeof(sys)), n);
	} else if (err == EADDRNOTAVAIL || err == EADDRINUSE) {
		sysctl("/proc/sys/net/ipv4/ip_local_port_range", sys, sizeof(sys));
		if (K.src)
			limit("%s: %s (ephemeral ports %s of 127.0.0.1 ... 127.0.0.%u → %s exhausted; "
			      "use more --sources) at connection %s", what, strerror(err), sys,
			      K.o->sources, to, n);
		else
			limit("%s: %s (ephemeral ports %s of %s → %s exhausted; use --sources) "
			      "at connection %s", what, strerror(err), sys,
			      inet_ntoa(K.o->url.addr.sin_addr), to, n);
	} else if (err == ENOBUFS || err == ENOMEM) {
		limit("%s: %s (kernel memory: net.ipv4.tcp_mem %s) at connection %s", what,
		      strerror(err), sysctl("/proc/sys/net/ipv4/tcp_mem", sys, sizeof(sys)), n);
	} else {
		limit("%s: %s at connection %s", what, strerror(err), n);
	}
}

static void progress(void)
{
	K.last_progress = now_ns();
}

static void on_open(struct conn *c)
{
	struct cap_conn *cc = c->user;

	cc->opened = 1;
	K.live[K.nlive++] = cc;
	K.opened++;
	K.pending--;
	progress();
	K.t_last = K.last_progress;
}

static void on_data(struct conn *c, const unsigned char *p, size_t n)
{
	if (K.h->on_data)
		K.h->on_data(c->user, p, n);
}

static void on_message(struct conn *c, int opcode, uint64_t len)
{
	if (K.h->on_message)
		K.h->on_message(c->user, opcode, len);
}

static void on_pong(struct conn *c)
{
	((struct cap_conn *)c->user)->pongs++;
	K.pongs++;
}

/* Before the upgrade completed: the opening stops here. */
static void handshake_failed(struct cap_conn *cc, const char *why)
{
	char n[32];

	cc->failed = 1;
	K.pending--;
	progress();
	/* a reset (or a write into one) is the server closing with our request unread */
	if (strstr(why, strerror(ECONNRESET)) || strstr(why, strerror(EPIPE)))
		limit("the server closed connection %s during the handshake (%s)",
		      thousands(cc->number, n), why);
	else
		limit("connection %s failed during the handshake: %s", thousands(cc->number, n), why);
}

static void gone(struct cap_conn *cc, const char *why)
{
	if (cc->gone)
		return;
	cc->gone = 1;
	if (!K.closing && K.h->on_gone)
		K.h->on_gone(cc, why);
}

static void on_error(struct conn *c, const char *why)
{
	struct cap_conn *cc = c->user;

	if (!cc->opened)
		handshake_failed(cc, why);
	else
		gone(cc, why);
}

static void on_closed(struct conn *c)
{
	struct cap_conn *cc = c->user;
	char why[64], n[32];

	if (K.closing)
		K.closed++;
	if (!cc->opened && !cc->failed) {
		cc->failed = 1;
		K.pending--;
		progress();
		limit("the server closed connection %s during the handshake", thousands(cc->number, n));
		return;
	}
	snprintf(why, sizeof(why), "closed by the server (code %d)", c->close_code);
	if (cc->opened)
		gone(cc, why);
}

static const struct conn_ops ops = {
	.on_open = on_open,
	.on_data = on_data,
	.on_message = on_message,
	.on_pong = on_pong,
	.on_error = on_error,
	.on_closed = on_closed,
};

static void start_one(void)
{
	struct cap_conn *cc = &K.all[K.started];
	const struct sockaddr_in *src = K.src ? &K.src[K.started % K.o->sources] : NULL;
	const char *what = "";

	if (K.h->before_start)
		K.h->before_start(K.started + 1);
	if (conn_open(&cc->c, &K.o->url, src, &ops, cc, &what)) {
		start_failed(what, errno, K.started + 1);
		return;
	}
	cc->number = ++K.started;
	K.pending++;
}

static void open_tick(void *x)
{
	uint64_t now = now_ns();
	char n[32];

	(void)x;
	while (!K.stopping && K.started < K.room && K.pending < K.o->concurrency)
		start_one();
	if (!K.stopping && !K.want && K.started == K.room && !K.pending)
		limit("no room for more than %s connections", thousands(K.room, n));
	if (K.pending && now - K.last_progress >= K.stall_ns) {
		char s[32];

		limit("no handshake completed for %.1f s with %s in flight after %s opened: "
		      "the server accepts no more connections", (double)K.stall_ns / 1e9,
		      thousands(K.pending, n), thousands(K.opened, s));
		K.pending = 0;	/* those are given up */
	}
	evloop_wake_at(K.pending ? K.last_progress + K.stall_ns : 0);
}

static int open_done(void *x)
{
	(void)x;
	return !K.pending && (K.stopping || K.started == K.room);
}

/* Loopback source addresses for --sources K (K > 1): only towards 127.x. */
static void make_sources(const struct opts *o)
{
	unsigned i;

	if (o->sources <= 1)
		return;
	if ((ntohl(o->url.addr.sin_addr.s_addr) >> 24) != 127)
		fail("--sources needs a loopback server address (127.x.y.z), not %s",
		     inet_ntoa(o->url.addr.sin_addr));
	K.src = xcalloc(o->sources, sizeof(*K.src));
	for (i = 0; i < o->sources; i++) {
		K.src[i].sin_family = AF_INET;
		K.src[i].sin_addr.s_addr = htonl(0x7f000001u + i);
	}
}

struct cap_conn **cap_open(const struct opts *o, unsigned want, const struct cap_hooks *h,
			   struct cap_result *res, unsigned *n)
{
	unsigned long long fds = nofile();
	unsigned i;

	memset(&K, 0, sizeof(K));
	K.o = o;
	K.h = h;
	K.want = want;
	/* "max": as many as there are descriptors (a limit comes first) */
	K.room = want ? want : (unsigned)(fds && fds < 1000000 ? fds : 1000000);
	K.all = xcalloc(K.room, sizeof(*K.all));
	K.live = xcalloc(K.room, sizeof(*K.live));
	K.stall_ns = o->stall_ms * 1000000u;
	make_sources(o);

	evloop_phase("open");
	K.t_first = K.t_last = now_ns();
	progress();
	evloop_run(open_done, open_tick, NULL);
	evloop_wake_at(0);
	/* handshakes given up at a stall */
	for (i = 0; i < K.started; i++)
		if (!K.all[i].opened && !K.all[i].failed) {
			K.all[i].failed = 1;
			conn_free(&K.all[i].c);
		}

	res->opened = K.opened;
	res->seconds = K.opened ? (double)(K.t_last - K.t_first) / 1e9 : 0.0;
	snprintf(res->limit, sizeof(res->limit), "%s", K.limit);
	*n = K.nlive;
	return K.live;
}

const struct sockaddr_in *cap_source(unsigned number)
{
	return K.src ? &K.src[(number - 1) % K.o->sources] : NULL;
}

uint64_t cap_pongs(void)
{
	return K.pongs;
}

static uint64_t close_deadline;

static int all_closed(void *x)
{
	(void)x;
	return K.closed >= K.nlive || now_ns() >= close_deadline;
}

void cap_close_all(void)
{
	unsigned i;

	K.closing = 1;
	evloop_phase("close");
	for (i = 0; i < K.nlive; i++) {
		if (K.live[i]->c.state == C_DONE)
			K.closed++;
		else
			conn_close(&K.live[i]->c, 1000);
	}
	close_deadline = now_ns() + CLOSE_WAIT_NS;
	evloop_wake_at(close_deadline);
	evloop_run(all_closed, NULL, NULL);
	evloop_wake_at(0);
	for (i = 0; i < K.started; i++)
		conn_free(&K.all[i].c);
	free(K.all);
	free(K.live);
	free(K.src);
	memset(&K, 0, sizeof(K));
}
