/*
 * lws-echo: the native reference echo server of wsbench (see servers/README.md).
 *
 *   lws-echo --port N [--host ADDR] [--no-coalesce] [--broadcast-limit BYTES] [--idle-defaults] [--tls-cert FILE --tls-key FILE]
 *   lws-echo --version
 *
 * --port 0 lets the kernel pick a free port. --no-coalesce sends one write per
 * message even when several small ones are queued (for comparison runs).
 * --tls-cert/--tls-key (PEM, both or neither): accept only wss:// (lws on
 * OpenSSL), and print a WSBENCH-TLS line per connection (tls.c).
 *
 * Listens on 127.0.0.1 only, or on ADDR with --host (an IPv4 address of this
 * host, never the wildcard 0.0.0.0: servers/README.md, item 2, for a load
 * generated on other hosts), prints "WSBENCH-READY port=<port>" once
 * listening, echoes every message, and exits 0 on SIGTERM/SIGINT.
 *
 * SIGUSR1 (wsbench gate, under valgrind --tool=callgrind --instr-atstart=no)
 * switches callgrind's instrumentation on, and the next one off again, so that
 * only the client's measured phase is counted; each switch is confirmed with a
 * line "WSBENCH-COUNT on" or "WSBENCH-COUNT off" once the event loop has made
 * it. Natively the switch costs a few no-op instructions.
 */
#include "broadcast.h"
#include "echo.h"
#include "pmd.h"
#include "prepared.h"
#include "tls.h"

#include <arpa/inet.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t count_toggles;
static struct lws_context *volatile running_context;

struct args {
	int port;
	const char *host;	/* the one address listened on */
	const char *cert, *key;	/* both or neither: TLS */
};

static void usage(void)
{
#ifdef WSBENCH_PMD
	fprintf(stderr, "usage: lws-echo-deflate --port N [--host ADDR] [--no-coalesce] [--broadcast-limit BYTES] [--idle-defaults] [--tls-cert FILE --tls-key FILE]"
		" [--deflate] | --version\n");
#else
	fprintf(stderr, "usage: lws-echo --port N [--host ADDR] [--no-coalesce] [--broadcast-limit BYTES] [--idle-defaults] [--tls-cert FILE --tls-key FILE]"
		" | --version\n");
#endif
	exit(2);
}

/* The version of the libwebsockets we run with, e.g. "libwebsockets 4.3.5-unknown". */
static void print_version(void)
{
	printf("libwebsockets %s\n", lws_get_library_version());
	exit(0);
}

/* An IPv4 address, not the wildcard: the server listens on that one address. */
static const char *parse_host(const char *s)
{
	struct in_addr addr;

	if (inet_pton(AF_INET, s, &addr) != 1 || addr.s_addr == htonl(INADDR_ANY)) {
		fprintf(stderr, "lws-echo: --host '%s': give one IPv4 address of this host "
			"(not 0.0.0.0)\n", s);
		exit(2);
	}
	return s;
}

static int parse_port(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (end == s || *end || n < 0 || n > 65535)
		usage();
	return (int)n;
}

/* "--NAME VALUE" or "--NAME=VALUE" at argv[*i]: the value (and *i moved past it), or NULL. */
static const char *option(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(argv[*i], name) && *i + 1 < argc)
		return argv[++*i];
	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	return NULL;
}

/* --broadcast-limit BYTES (servers/README.md item 16): a positive integer. */
static size_t parse_limit(const char *s)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 10);

	if (end == s || *end || *s == '-' || !n) {
		fprintf(stderr, "lws-echo: --broadcast-limit '%s': give a positive number of bytes\n", s);
		exit(2);
	}
	return (size_t)n;
}

static void parse_args(int argc, char **argv, struct args *a)
{
	const char *v;
	int i;

	memset(a, 0, sizeof(*a));
	a->port = -1;
	a->host = "127.0.0.1";
	for (i = 1; i < argc; i++) {
		if ((v = option(argc, argv, &i, "--port")))
			a->port = parse_port(v);
		else if ((v = option(argc, argv, &i, "--host")))
			a->host = parse_host(v);
		else if ((v = option(argc, argv, &i, "--tls-cert")))
			a->cert = v;
		else if ((v = option(argc, argv, &i, "--tls-key")))
			a->key = v;
		else if ((v = option(argc, argv, &i, "--broadcast-limit")))
			bcast_limit = parse_limit(v);
		else if (!strcmp(argv[i], "--idle-defaults"))
			continue; /* item 18: lws-echo sets no timeout or ping of its own: libwebsockets' defaults always apply */
		else if (!strcmp(argv[i], "--no-coalesce"))
			echo_coalesce = 0;
		else if (pmd_arg(argc, argv, &i))
			continue;
		else if (!strcmp(argv[i], "--version"))
			print_version();
		else
			usage();
	}
	if (a->port < 0 || !a->cert != !a->key)
		usage();
#ifdef WSBENCH_PMD
	/* coalesced echoes are framed by us (LWS_WRITE_RAW): lws would not compress them */
	if (pmd_on)
		echo_coalesce = 0;
#endif
}

/*
 * Besides setting the flag, wake the event loop: lws_cancel_service() only
 * writes to lws' internal event pipe, so it is safe here, and it covers a
 * signal that lands just before poll() is entered.
 */
static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
	if (running_context)
		lws_cancel_service(running_context);
}

/*
 * The switch itself is made in the event loop, not here: callgrind gives a
 * signal handler a state of its own, restored when the handler returns.
 */
static void on_count_signal(int sig)
{
	(void)sig;
	count_toggles++;
	if (running_context)
		lws_cancel_service(running_context);
}

static void count_switch(void)
{
	static int on;

	on = !on;
#ifdef HAVE_CALLGRIND
	if (on)
		CALLGRIND_START_INSTRUMENTATION;
	else
		CALLGRIND_STOP_INSTRUMENTATION;
#endif
	printf("WSBENCH-COUNT %s\n", on ? "on" : "off");
	fflush(stdout);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: let poll() return */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_count_signal;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * Every connection is a descriptor: raise the soft RLIMIT_NOFILE to the hard
 * limit before lws sizes its tables from it (lws stops accepting when its
 * table is full; the clients see handshakes that do not complete).
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static struct lws_context *create_context(const struct args *a)
{
	struct lws_context_creation_info info;

	memset(&info, 0, sizeof(info));
	info.port = a->port;
	if (a->cert) {	/* the vhost then takes TLS connections only */
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = a->cert;
		info.ssl_private_key_filepath = a->key;
	}
	info.iface = a->host;
	info.vhost_name = "default";
	info.protocols = echo_protocols;
	/* per-thread rx buffer; lws reads min(this, rx_buffer_size) per poll */
	info.pt_serv_buf_size = ECHO_RX_BUFFER;
	info.count_threads = 1;
#ifdef WSBENCH_PMD
	/* --deflate: lws' permessage-deflate (NULL without it) */
	info.extensions = pmd_extensions();
#else
	/* no info.extensions: permessage-deflate is never offered */
#endif
	return lws_create_context(&info);
}

static int announce_port(struct lws_context *ctx)
{
	struct lws_vhost *vh = lws_get_vhost_by_name(ctx, "default");
	int port = vh ? lws_get_vhost_listen_port(vh) : -1;

	if (port <= 0)
		return -1;
	printf("WSBENCH-READY port=%d\n", port);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	struct lws_context *ctx;
	char why[512];
	const char *log_levels;
	int rc = 0;

	parse_args(argc, argv, &a);
	if (a.cert && tls_check_files(a.cert, a.key, why, sizeof(why))) {
		fprintf(stderr, "lws-echo: %s\n", why);
		return 1;
	}
	/* WSBENCH_LWS_LOG=N: lws' own log levels to stderr (a mask of LLL_*; 31 with
	 * NOTICE, INFO and DEBUG, as far as the build compiled them in), to diagnose */
	log_levels = getenv("WSBENCH_LWS_LOG");
	lws_set_log_level(log_levels ? atoi(log_levels) : LLL_ERR | LLL_WARN, NULL);
	install_signals();
	raise_nofile();

	ctx = create_context(&a);
	if (!ctx) {
		fprintf(stderr, "lws-echo: cannot listen on %s:%d%s\n", a.host, a.port,
			a.cert ? " with TLS" : "");
		return 1;
	}
	running_context = ctx;
	if (announce_port(ctx)) {
		fprintf(stderr, "lws-echo: cannot determine the listening port\n");
		rc = 1;
	}

	while (!rc && !stop_requested) {
		if (lws_service(ctx, 0) < 0)
			rc = 1;
		for (; count_toggles > 0; count_toggles--)
			count_switch();
	}

	running_context = NULL;
	lws_context_destroy(ctx);
	prepared_free_all();
	bcast_free_all();
	return rc;
}
