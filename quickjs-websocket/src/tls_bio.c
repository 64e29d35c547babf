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
 *
 * Writes: OpenSSL writes each record (16 KiB of plaintext at most) to the BIO
 * as soon as it is sealed, from a buffer it reuses for the next record, so
 * the records of one burst cannot be handed to one writev() where they are.
 * While the transport writes a burst (tls_bio_gather .. tls_bio_flush: opt
 * "tlsgather"), the records are copied into an output buffer, one for the
 * process, and sent with one send() when the burst ends or the buffer is
 * full: a 64 KiB message is one send() instead of five, at the price of one
 * more copy of its ciphertext.  What the socket does not take at the end of
 * the burst is moved to a buffer of the session's own (b->out), sent before
 * any later byte of the session; the transport counts the plaintext of the
 * records not sent as unwritten (tp_tls.c), so bufferedAmount still counts
 * every byte the kernel has not taken, whole records at a time.
 */
#include "tls_bio.h"
#include "opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define TLS_RBUF (256 * 1024) /* the read buffer while data flows */
#define TLS_OBUF (256 * 1024) /* the output buffer of a burst (about 16 records) */

static struct {
    BIO_METHOD *bio;
    void (*lost)(struct tls_bio *b, int err);
    uint8_t *in;           /* the read buffer (TLS_RBUF), made at the first read */
    size_t in_off, in_len; /* its unread bytes, in[in_off, in_len), are in_owner's */
    struct tls_bio *in_owner;
    uint8_t *out;          /* the output buffer (TLS_OBUF), made at the first burst */
    size_t out_off, out_len; /* its unsent records, out[out_off, out_len), the burst's */
    uint64_t kept, held_out;
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
    free(B.out);
    B.out = NULL;
    B.out_off = B.out_len = 0;
    B.in_owner = NULL;
    B.in_off = B.in_len = 0;
}

uint64_t tls_bio_kept(void)
{
    return B.kept;
}

uint64_t tls_bio_held_out(void)
{
    return B.held_out;
}

/* p[*off, len) to the socket: 0 all sent, -1 and errno (EAGAIN: not all) */
static int send_all(struct tls_bio *s, const uint8_t *p, size_t *off, size_t len)
{
    while (*off < len) {
        ssize_t r = send(s->fd, p + *off, len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EWOULDBLOCK)
                errno = EAGAIN;
            s->full = errno == EAGAIN;
            return -1;
        }
        *off += (size_t)r;
        s->sent += (uint64_t)r;
        if (*off < len) { /* the socket took part: it is full (no second try) */
            s->full = 1;
            errno = EAGAIN;
            return -1;
        }
    }
    return 0;
}

/* the session's held records first: 0 none left, -1 and errno */
static int send_held(struct tls_bio *s)
{
    if (!s->out)
        return 0;
    if (send_all(s, s->out, &s->out_off, s->out_len) < 0)
        return -1;
    free(s->out);
    s->out = NULL;
    s->out_off = s->out_len = 0;
    return 0;
}

/* the burst's gathered records: 0 all sent (the buffer empty), -1 and errno */
static int send_gathered(struct tls_bio *s)
{
    if (send_all(s, B.out, &B.out_off, B.out_len) < 0)
        return -1;
    B.out_off = B.out_len = 0;
    return 0;
}

static int bio_write(BIO *b, const char *p, int n)
{
    struct tls_bio *s = BIO_get_data(b);
    ssize_t r;
    BIO_clear_retry_flags(b);
    if (n <= 0)
        return 0;
    if (s->out && send_held(s) < 0)
        goto fail;
    if (s->gather) { /* (a record is far smaller than the buffer) */
        if (B.out_len + (size_t)n > TLS_OBUF && send_gathered(s) < 0)
            goto fail;
        memcpy(B.out + B.out_len, p, (size_t)n);
        B.out_len += (size_t)n;
        s->written += (uint64_t)n;
        return n;
    }
    r = send(s->fd, p, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r > 0) {
        s->written += (uint64_t)r;
        s->sent += (uint64_t)r;
        return (int)r;
    }
fail:
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        BIO_set_retry_write(b);
    return -1;
}

void tls_bio_gather(struct tls_bio *s)
{
    if (!B.out && !(B.out = malloc(TLS_OBUF)))
        return; /* (no gathering: one send() per record) */
    s->gather = 1;
}

int tls_bio_flush(struct tls_bio *s)
{
    int was = s->gather, r;
    s->gather = 0;
    r = send_held(s);
    if (r == 0 && was)
        r = send_gathered(s);
    if (r == 0)
        return 0;
    if (!was || B.out_off == B.out_len || errno != EAGAIN) {
        if (was)
            B.out_off = B.out_len = 0;
        return -1;
    }
    /* the socket is full: the burst's unsent records held for the session,
     * after those it held already */
    {
        size_t k = B.out_len - B.out_off, h = s->out ? s->out_len - s->out_off : 0;
        uint8_t *nb = malloc(h + k);
        if (!nb) {
            B.out_off = B.out_len = 0;
            errno = ENOMEM;
            return -1;
        }
        if (h)
            memcpy(nb, s->out + s->out_off, h);
        memcpy(nb + h, B.out + B.out_off, k);
        free(s->out);
        s->out = nb;
        s->out_off = 0;
        s->out_len = h + k;
        B.out_off = B.out_len = 0;
        B.held_out++;
    }
    errno = EAGAIN;
    return -1;
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
            s->drained = r < TLS_RBUF;
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
    if (s->gather) {
        B.out_off = B.out_len = 0;
        s->gather = 0;
    }
    free(s->out);
    s->out = NULL;
    s->out_off = s->out_len = 0;
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
