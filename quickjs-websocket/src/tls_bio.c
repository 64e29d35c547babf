/*
 * The socket BIO of our TLS sessions, and its read buffer, one for the
 * process.
 *
 * OpenSSL reads and writes the socket itself, through this BIO (a buffered
 * recv, and a send with MSG_NOSIGNAL: OpenSSL's own socket BIO write()s, and
 * a peer gone would kill the process with SIGPIPE); its non-blocking retries
 * map straight onto poll events.  Reads: the BIO takes what the socket holds
 * into a 256 KiB buffer with one recv(), as a ws:// read does, and hands
 * OpenSSL each record's header and body from there (one copy).  Not
 * OpenSSL's read_ahead: before each record it moves every unread byte of its
 * buffer to the front, so a full 256 KiB buffer is copied about 8 times over
 * (half the instructions of a 64 KiB echo).  The buffer is one for the
 * process (reads are one at a time); bytes a session leaves in it are moved
 * to a buffer of their own when another session reads, so an idle session
 * holds none.
 */
#include "tls_bio.h"
#include "opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define TLS_RBUF (256 * 1024) /* the read buffer while data flows */

static struct {
    BIO_METHOD *bio;
    void (*lost)(struct tls_bio *b, int err);
    uint8_t *in;           /* the read buffer (TLS_RBUF), made at the first read */
    size_t in_off, in_len; /* its unread bytes, in[in_off, in_len), are in_owner's */
    struct tls_bio *in_owner;
    uint64_t kept;
} B;

void tls_bio_init(void (*lost)(struct tls_bio *b, int err))
{
    B.lost = lost;
}

void tls_bio_destroy(void)
{
    BIO_meth_free(B.bio);
    B.bio = NULL;
    free(B.in);
    B.in = NULL;
    B.in_owner = NULL;
    B.in_off = B.in_len = 0;
}

uint64_t tls_bio_kept(void)
{
    return B.kept;
}

static int bio_write(BIO *b, const char *p, int n)
{
    struct tls_bio *s = BIO_get_data(b);
    ssize_t r = send(s->fd, p, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    BIO_clear_retry_flags(b);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_write(b);
    return (int)r;
}

/* the shared buffer's unread bytes into a buffer of their owner's own; out of
 * memory, they are lost and the owner's session fails at its next read
 * (B.lost) */
static void keep_unread(void)
{
    struct tls_bio *o = B.in_owner;
    size_t k = B.in_len - B.in_off;
    B.in_owner = NULL;
    if (!k)
        return;
    o->kept = malloc(k);
    if (!o->kept) {
        o->kept_off = o->kept_len = 0;
        B.lost(o, ENOMEM);
        return;
    }
    memcpy(o->kept, B.in + B.in_off, k);
    o->kept_off = 0;
    o->kept_len = k;
    B.kept++;
}

/* the session's unread bytes (its own first, then the shared buffer's); the
 * socket only when there are none (so the end of the stream, or an error,
 * comes after every byte before it) */
static int bio_read(BIO *b, char *p, int n)
{
    struct tls_bio *s = BIO_get_data(b);
    const uint8_t *from;
    size_t have;
    BIO_clear_retry_flags(b);
    if (n <= 0)
        return 0;
    if (s->kept) {
        from = s->kept + s->kept_off;
        have = s->kept_len - s->kept_off;
    } else {
        if (B.in_owner != s || B.in_off == B.in_len) {
            ssize_t r;
            if (B.in_owner && B.in_owner != s)
                keep_unread();
            if (!B.in && !(B.in = malloc(TLS_RBUF))) {
                errno = ENOMEM;
                return -1;
            }
            B.in_owner = NULL;
            r = recv(s->fd, B.in, TLS_RBUF, MSG_DONTWAIT);
            if (r <= 0) {
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                    BIO_set_retry_read(b);
                return (int)r;
            }
            B.in_owner = s;
            B.in_off = 0;
            B.in_len = (size_t)r;
        }
        from = B.in + B.in_off;
        have = B.in_len - B.in_off;
    }
    if (have > (size_t)n)
        have = (size_t)n;
    memcpy(p, from, have);
    if (s->kept) {
        s->kept_off += have;
        if (s->kept_off == s->kept_len) {
            free(s->kept);
            s->kept = NULL;
        }
    } else {
        B.in_off += have;
    }
    return (int)have;
}

int tls_bio_held(const struct tls_bio *s)
{
    return s->kept || (B.in_owner == s && B.in_off < B.in_len);
}

void tls_bio_drop(struct tls_bio *s)
{
    if (B.in_owner == s) {
        B.in_owner = NULL;
        B.in_off = B.in_len = 0;
    }
    free(s->kept);
    s->kept = NULL;
    s->kept_off = s->kept_len = 0;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    UNUSED(b);
    UNUSED(num);
    UNUSED(ptr);
    return cmd == BIO_CTRL_FLUSH; /* nothing is buffered here */
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

BIO *tls_bio_new(struct tls_bio *s)
{
    BIO *b;
    if (!B.bio) {
        B.bio = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "qjsws socket");
        if (!B.bio || !BIO_meth_set_write(B.bio, bio_write) || !BIO_meth_set_read(B.bio, bio_read) ||
            !BIO_meth_set_ctrl(B.bio, bio_ctrl) || !BIO_meth_set_create(B.bio, bio_create)) {
            BIO_meth_free(B.bio);
            B.bio = NULL;
            return NULL;
        }
    }
    b = BIO_new(B.bio);
    if (b)
        BIO_set_data(b, s);
    return b;
}
