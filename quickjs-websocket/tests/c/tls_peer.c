/*
 * A WebSocket echo peer over TLS (OpenSSL, blocking) that does to a client's TLS
 * session what Python's ssl cannot: a TLS 1.2 renegotiation attempt, and TLS 1.3 key
 * updates, each while the client's writes are blocked (test_tls_events.py).
 *
 *   tls_peer CERT KEY MODE      (prints "WSBENCH-READY port=N", serves one connection)
 *
 * MODE:
 *   reneg      TLS 1.2 only.  After the 101 it reads nothing for 300 ms (the client's
 *              burst fills the socket: its writes wait), then asks for a renegotiation
 *              (HelloRequest) and echoes.  A client that refuses answers with a
 *              no_renegotiation alert, upon which OpenSSL ends the session with a fatal
 *              alert: the peer prints "RENEG-REFUSED <reason>" (or "RENEG-DONE" if the
 *              client renegotiated).
 *   keyupdate  TLS 1.3.  After the 101 it reads nothing for 300 ms, then sends a
 *              KeyUpdate that requests the client's, and another after every 500 echoed
 *              frames; it echoes everything.  Prints "KEYUPDATES n".
 * Every frame is echoed as it came (unmasked, same FIN and opcode), a close frame
 * included, after which the peer prints "CLOSE <code>" and ends.  Any TLS error is
 * printed as "TLSERR <reason>".
 */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>

static SSL *ssl;

static void tls_error(const char *what)
{
    unsigned long e = ERR_peek_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    printf("TLSERR %s: %s\n", what, r ? r : "closed");
    fflush(stdout);
    exit(0);
}

static void read_all(void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        size_t k;
        if (!SSL_read_ex(ssl, (char *)p + got, n - got, &k)) {
            unsigned long e = ERR_peek_error();
            if (ERR_GET_REASON(e) == SSL_R_NO_RENEGOTIATION) {
                printf("RENEG-REFUSED %s\n", ERR_reason_error_string(e));
                fflush(stdout);
                exit(0);
            }
            tls_error("read");
        }
        got += k;
    }
}

static void write_all(const void *p, size_t n)
{
    size_t k;
    if (n && !SSL_write_ex(ssl, p, n, &k))
        tls_error("write");
}

/* the upgrade request, answered with the 101 */
static void upgrade(void)
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    char head[8192], key[128], acc[64], resp[256];
    unsigned char sha[SHA_DIGEST_LENGTH];
    size_t n = 0;
    char *k, *e;
    int rl;
    while (n < 4 || memcmp(head + n - 4, "\r\n\r\n", 4)) {
        if (n == sizeof(head) - 1)
            exit(1);
        read_all(head + n, 1);
        n++;
    }
    head[n] = 0;
    k = strcasestr(head, "sec-websocket-key:");
    if (!k)
        exit(1);
    k += 18;
    while (*k == ' ')
        k++;
    e = strstr(k, "\r\n");
    snprintf(key, sizeof(key), "%.*s%s", (int)(e - k), k, guid);
    SHA1((const unsigned char *)key, strlen(key), sha);
    EVP_EncodeBlock((unsigned char *)acc, sha, SHA_DIGEST_LENGTH);
    rl = snprintf(resp, sizeof(resp),
                  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", acc);
    write_all(resp, (size_t)rl);
}

static void key_update(void)
{
    if (!SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) || SSL_do_handshake(ssl) != 1)
        tls_error("key update");
}

int main(int argc, char **argv)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    int ls, fd, one = 1, keyupdate, keyupdates = 0;
    long frames = 0;
    SSL_CTX *ctx;
    if (argc != 4)
        return 2;
    keyupdate = !strcmp(argv[3], "keyupdate");
    ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, argv[1]) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, argv[2], SSL_FILETYPE_PEM) != 1)
        return 2;
    SSL_CTX_set_min_proto_version(ctx, keyupdate ? TLS1_3_VERSION : TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(ctx, keyupdate ? TLS1_3_VERSION : TLS1_2_VERSION);
    ls = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
        getsockname(ls, (struct sockaddr *)&a, &al))
        return 2;
    printf("WSBENCH-READY port=%d\n", ntohs(a.sin_port));
    fflush(stdout);
    fd = accept(ls, NULL, NULL);
    if (fd < 0)
        return 2;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1)
        tls_error("handshake");
    upgrade();
    usleep(300000); /* the client's burst fills the socket meanwhile */
    if (keyupdate) {
        key_update();
        keyupdates++;
    } else if (!SSL_renegotiate(ssl) || SSL_do_handshake(ssl) != 1) {
        tls_error("renegotiate");
    }
    for (;;) {
        unsigned char h[14], mask[4], *p;
        uint64_t len;
        size_t hl = 2, i;
        read_all(h, 2);
        len = h[1] & 127;
        if (len == 126) {
            read_all(h + 2, 2);
            len = (uint64_t)h[2] << 8 | h[3];
            hl = 4;
        } else if (len == 127) {
            read_all(h + 2, 8);
            for (len = 0, i = 0; i < 8; i++)
                len = len << 8 | h[2 + i];
            hl = 10;
        }
        if (h[1] & 128)
            read_all(mask, 4);
        p = malloc(len ? len : 1);
        read_all(p, len);
        if (h[1] & 128)
            for (i = 0; i < len; i++)
                p[i] ^= mask[i & 3];
        h[1] &= 127; /* the same header, unmasked */
        write_all(h, hl);
        write_all(p, len);
        if ((h[0] & 15) == 8) {
            printf("CLOSE %d\n", len >= 2 ? p[0] << 8 | p[1] : 1005);
            if (keyupdate)
                printf("KEYUPDATES %d\n", keyupdates);
            else
                printf("RENEG-%s\n", SSL_num_renegotiations(ssl) ? "DONE" : "NONE");
            fflush(stdout);
            free(p);
            SSL_shutdown(ssl);
            close(fd);
            return 0;
        }
        free(p);
        if (keyupdate && ++frames % 500 == 0) {
            key_update();
            keyupdates++;
        }
    }
}
