#include "tls.h"
#include "http.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_MAX 16384		/* plaintext of one TLS record */
#define GATHER_MAX (256 * 1024)		/* what one SSL_write takes from the queue */

enum op { OP_HANDSHAKE, OP_READ, OP_WRITE };

struct tls_conn {
	SSL *ssl;
	int up;			/* handshake done */
	int failed;		/* a fatal error (no close_notify then) */
	int read_needs_write;	/* the handshake or a read waits for writability */
	int write_needs_read;	/* a write waits for the server's bytes */
	int err;		/* errno for the failure */
	char why[256];
};

static SSL_CTX *ctx;
static SSL_SESSION *newest;	/* --tls-resume: offered to the next connection */
static int resume;
static char server_name[256];	/* SNI, for a host name (not for an IP address) */
static struct tls_conn **by_fd;
static size_t nfd;
static unsigned char *scratch;	/* tls_write_gathered's gathering buffer */
static struct {
	unsigned long handshakes, resumed;
	char version[32], cipher[96], group[64];
} seen;

/* What OpenSSL's error queue says, emptied; `dflt` if nothing. */
static const char *queued_reason(const char *dflt)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	ERR_clear_error();
	return r ? r : dflt;
}

static int keep_session(SSL *ssl, SSL_SESSION *s)
{
	(void)ssl;
	if (!SSL_SESSION_is_resumable(s))
		return 0;
	SSL_SESSION_free(newest);
	newest = s;
	return 1;	/* the reference is ours */
}

/* Check the server's name: the host of the URL. */
static void set_name(const struct url *u)
{
	X509_VERIFY_PARAM *param = SSL_CTX_get0_param(ctx);
	const char *name = u->host;
	struct in_addr a;

	if (inet_pton(AF_INET, name, &a) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(param, name) != 1)
			fail("wss://: cannot check the IP address %s", name);
		return;
	}
	X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (X509_VERIFY_PARAM_set1_host(param, name, 0) != 1)
		fail("wss://: cannot check the host name %s", name);
	strcpy(server_name, name);
}

void tls_init(const char *ca_file, const struct url *u, int resume_sessions)
{
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx)
		fail("wss://: SSL_CTX_new: %s", queued_reason("failed"));
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* the one CA we trust, and nothing of the system's store */
	if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1)
		fail("--ca %s: %s", ca_file, queued_reason("cannot load it"));
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* a retried SSL_write gets the same bytes, gathered again (tls_write_gathered) */
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	set_name(u);
	resume = resume_sessions;
	if (resume) {
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT |
					       SSL_SESS_CACHE_NO_INTERNAL_STORE);
		SSL_CTX_sess_set_new_cb(ctx, keep_session);
	}
	scratch = xmalloc(GATHER_MAX);
}

void tls_cleanup(void)
{
	size_t i;

	for (i = 0; i < nfd; i++)
		tls_detach((int)i);
	free(by_fd);
	by_fd = NULL;
	nfd = 0;
	SSL_SESSION_free(newest);
	newest = NULL;
	SSL_CTX_free(ctx);
	ctx = NULL;
	free(scratch);
	scratch = NULL;
}

void tls_attach(int fd)
{
	struct tls_conn *t = xcalloc(1, sizeof(*t));

	if ((size_t)fd >= nfd) {
		size_t n = (size_t)fd + 64;

		by_fd = xrealloc(by_fd, n * sizeof(*by_fd));
		memset(by_fd + nfd, 0, (n - nfd) * sizeof(*by_fd));
		nfd = n;
	}
	t->ssl = SSL_new(ctx);
	if (!t->ssl || SSL_set_fd(t->ssl, fd) != 1)
		fail("wss://: SSL_new: %s", queued_reason("failed"));
	SSL_set_connect_state(t->ssl);
	if (*server_name && SSL_set_tlsext_host_name(t->ssl, server_name) != 1)
		fail("wss://: cannot send the server name %s", server_name);
	if (resume && newest && SSL_set_session(t->ssl, newest) != 1)
		fail("wss://: SSL_set_session: %s", queued_reason("failed"));
	by_fd[fd] = t;
}

void tls_detach(int fd)
{
	struct tls_conn *t = (size_t)fd < nfd ? by_fd[fd] : NULL;

	if (!t)
		return;
	if (t->up && !t->failed)
		SSL_shutdown(t->ssl);	/* our close_notify, if the socket takes it */
	ERR_clear_error();
	SSL_free(t->ssl);
	free(t);
	by_fd[fd] = NULL;
}

/* A failure, in one line: OpenSSL's reason, and why the certificate was refused. */
static enum tls_status failed(struct tls_conn *t, int ssl_error, int err)
{
	long verify = SSL_get_verify_result(t->ssl);

	t->failed = 1;
	if (ssl_error == SSL_ERROR_SYSCALL) {
		t->err = err ? err : EPIPE;
		snprintf(t->why, sizeof(t->why), "TLS: %s",
			 err ? strerror(err) : "the connection ended without close_notify");
		ERR_clear_error();
		return TLS_FAILED;
	}
	t->err = EPROTO;
	if (!t->up && verify != X509_V_OK)
		snprintf(t->why, sizeof(t->why), "TLS: %s: %s",
			 queued_reason("certificate verify failed"),
			 X509_verify_cert_error_string(verify));
	else
		snprintf(t->why, sizeof(t->why), "TLS: %s", queued_reason("protocol error"));
	return TLS_FAILED;
}

/* What SSL_get_error says of a call that returned r <= 0. */
static enum tls_status status(struct tls_conn *t, int r, enum op op)
{
	int err = errno;	/* a failed system call's, before anything else runs */
	int e = SSL_get_error(t->ssl, r);

	switch (e) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		if (op == OP_WRITE)
			t->write_needs_read = e == SSL_ERROR_WANT_READ;
		else
			t->read_needs_write = e == SSL_ERROR_WANT_WRITE;
		return TLS_BLOCKED;
	case SSL_ERROR_ZERO_RETURN:
		t->err = EPIPE;
		snprintf(t->why, sizeof(t->why), "TLS: the server ended the session (close_notify)");
		return TLS_CLOSED;
	default:
		return failed(t, e, err);
	}
}

static void note_handshake(struct tls_conn *t)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(t->ssl);
	int group = SSL_get_negotiated_group(t->ssl);
	const char *name;

	t->up = 1;
	seen.resumed += SSL_session_reused(t->ssl) == 1;
	if (seen.handshakes++)
		return;
	snprintf(seen.version, sizeof(seen.version), "%s", SSL_get_version(t->ssl));
	name = c ? SSL_CIPHER_standard_name(c) : NULL;
	snprintf(seen.cipher, sizeof(seen.cipher), "%s", name ? name : "");
	name = group > 0 ? SSL_group_to_name(t->ssl, group) : NULL;
	snprintf(seen.group, sizeof(seen.group), "%s", name ? name : "");
}

int tls_handshake(int fd)
{
	struct tls_conn *t = by_fd[fd];
	int r = SSL_do_handshake(t->ssl);

	if (r == 1) {
		t->read_needs_write = 0;
		note_handshake(t);
		return 1;
	}
	switch (status(t, r, OP_HANDSHAKE)) {
	case TLS_BLOCKED:
		return 0;
	case TLS_CLOSED:
		snprintf(t->why, sizeof(t->why), "TLS: the server ended the session during the handshake");
		return -1;
	default:
		return -1;
	}
}

enum tls_status tls_read_records(int fd, unsigned char *buf, size_t cap, size_t *got)
{
	struct tls_conn *t = by_fd[fd];

	*got = 0;
	/*
	 * Each SSL_read gets room for a whole record and takes one whole, so
	 * nothing decrypted stays behind (SSL_pending, checked anyway) and the
	 * socket's readiness says all there is to say.
	 */
	while (cap - *got >= RECORD_MAX || (*got < cap && SSL_pending(t->ssl) > 0)) {
		size_t room = cap - *got;
		int r = SSL_read(t->ssl, buf + *got, room > INT_MAX ? INT_MAX : (int)room);

		if (r <= 0)
			return status(t, r, OP_READ);
		t->read_needs_write = 0;
		*got += (size_t)r;
	}
	return TLS_MORE;
}

/* Copy the vector's first bytes, up to GATHER_MAX, into the scratch buffer. */
static size_t gather(const struct iovec *iov, int n)
{
	size_t len = 0;
	int i;

	for (i = 0; i < n && len < GATHER_MAX; i++) {
		size_t k = iov[i].iov_len < GATHER_MAX - len ? iov[i].iov_len : GATHER_MAX - len;

		memcpy(scratch + len, iov[i].iov_base, k);
		len += k;
	}
	return len;
}

ssize_t tls_write_gathered(int fd, const struct iovec *iov, int n)
{
	struct tls_conn *t = by_fd[fd];
	const void *p = iov[0].iov_base;
	size_t len = iov[0].iov_len;
	int r;

	/*
	 * After a write that had to wait, OpenSSL wants the same bytes again, at
	 * least as many: the queue's head has not moved, so the same choice is
	 * made and the same bytes come first (the queue only grows at its end).
	 */
	if (n > 1 && len < GATHER_MAX) {
		len = gather(iov, n);
		p = scratch;
	}
	r = SSL_write(t->ssl, p, len > INT_MAX ? INT_MAX : (int)len);
	if (r > 0) {
		t->write_needs_read = 0;
		return r;
	}
	if (status(t, r, OP_WRITE) == TLS_BLOCKED) {
		errno = EAGAIN;
		return -1;
	}
	errno = t->err;
	return -1;
}

int tls_wants_out(int fd, int queued)
{
	const struct tls_conn *t = by_fd[fd];

	return t->read_needs_write || (queued && !t->write_needs_read);
}

const char *tls_why(int fd)
{
	const struct tls_conn *t = (size_t)fd < nfd ? by_fd[fd] : NULL;

	return t && *t->why ? t->why : NULL;
}

/* `"key": "value"` or `"key": null` for an empty value, after `sep`. */
static size_t json_field(char *out, size_t cap, const char *sep, const char *key,
			 const char *v)
{
	int n = snprintf(out, cap, *v ? "%s\"%s\": \"%s\"" : "%s\"%s\": null", sep, key, v);

	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

const char *tls_result(void)
{
	static char out[512];
	size_t n = 0;

	n += json_field(out + n, sizeof(out) - n, ", \"tls\": {", "version", seen.version);
	n += json_field(out + n, sizeof(out) - n, ", ", "cipher", seen.cipher);
	n += json_field(out + n, sizeof(out) - n, ", ", "group", seen.group);
	n += json_field(out + n, sizeof(out) - n, ", ", "library", OpenSSL_version(OPENSSL_VERSION));
	snprintf(out + n, sizeof(out) - n, ", \"handshakes\": %lu, \"resumed\": %lu}",
		 seen.handshakes, seen.resumed);
	return out;
}
