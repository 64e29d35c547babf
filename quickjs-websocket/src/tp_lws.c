/*
 * The libwebsockets adapter: the context (made at the first connection lws
 * sets up), the poll callbacks that put lws' sockets in our event loop, the
 * protocol callback, the pongs lws answers, and the hand-over of a ws://
 * connection from lws to our framing.  lws' own framing of the lws path
 * (sends, our close frame) is fr_lws.c.
 */
#include "tp_lws.h"
#include "fr_lws.h"
#include "loop.h"
#include "opts.h"
#include "pool.h"
#include "tp_tls.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libwebsockets.h>

struct lws_context *tp_lws_context;
int tp_lws_connected_;

static struct {
    struct tp_up up;
    int destroying;
    int lws_in;       /* inside an lws service call and not in our callback: what
                       * asks for POLLOUT now is lws itself (pings, below) */
    struct tp *pong_c; /* lws asked for POLLOUT for this conn's pong: pause it */
    struct tp *handover; /* conns whose lws rx is paused at a message end */
} S;

void tp_lws_log_level(const char *level)
{
    lws_set_log_level(level ? atoi(level) : (LLL_ERR), NULL);
}

/* ------------------------------------------------------------------ */
/* lws' sockets in our event loop                                       */

static void lws_fd_ready(void *opaque, int fd, short events, short revents);

static const struct loop_handler lws_handler = { lws_fd_ready, NULL };

/* a socket handed over to our framing: we read it (lws' POLLIN is off, rx
 * flow control), so it keeps POLLIN whatever lws asks for */
static int own_events(int fd, int events)
{
    if (loop_fd_data(fd))
        events |= POLLIN;
    return events;
}

/*
 * Service one of lws' sockets: for one handed over to our framing, rx (and
 * hangups) are ours (the loop's opaque is the connection) and only what is
 * left goes to lws.
 */
static void lws_fd_ready(void *opaque, int fd, short events, short revents)
{
    struct lws_pollfd pfd;
    struct tp *t = opaque;
    if (t) {
        if (revents & (POLLIN | POLLHUP | POLLERR))
            S.up.io(t, (short)(revents & (POLLIN | POLLHUP | POLLERR)));
        revents &= (short)~(POLLIN | POLLHUP | POLLERR);
        if (!revents)
            return;
    }
    pfd.fd = fd;
    pfd.events = events;
    pfd.revents = revents;
    S.lws_in = 1;
    lws_service_fd(tp_lws_context, &pfd);
    S.lws_in = 0;
}

/* ------------------------------------------------------------------ */
/* pings that lws answers                                                */

/*
 * lws parses pings itself and answers them without telling us: it keeps
 * the payload of ONE pong, asks for POLLOUT and writes the pong before our
 * writable callback.  Two cases lose a pong (RFC 6455 5.5.2: every ping is
 * answered unless a close came first; 5.5.3: of several unanswered pings
 * at least the last one):
 *  - a ping that comes while the pong of an earlier one is still pending is
 *    dropped (lws answers the first, never the last);
 *  - a close frame parsed behind a ping before the pong went out: lws sends
 *    its close answer first and then forgets the pong.
 * Both happen when lws parses a ping and more frames in one go: frames in
 * one read (baseline, wss://), and with own framing the frames that came
 * with the 101.  So lws must not parse past a ping before its pong is
 * written.  We see the ping as lws asking for POLLOUT on its own (during an
 * lws service call, S.lws_in, not from our callback) while the connection
 * is open: lws' parser is then paused (rx flow control, our own reason bit,
 * applied at once so that lws stops right behind the ping and keeps the rest
 * buffered), and resumed in our writable callback, which lws reaches only
 * once it has no pong left to write.  Anything else lws asks POLLOUT for on
 * its own at such a time costs one pause to the next writable callback.
 * No cost per message: the own receive path never gets here.
 */
#define QJSWS_RXFLOW_PONG (1 << 1) /* our rx flow reason bit (b0 is lws' bool) */

/* CHANGE_MODE_POLL_FD with POLLOUT, lws' own doing: a ping lws will answer? */
static void pong_watch(struct tp *t, struct lws *wsi)
{
    unsigned st;
    if (t->wsi != wsi || t->fr != &fr_lws || t->lws.pong_wait || t->lws.hpaused ||
        t->lws.close_sent)
        return;
    st = S.up.lws.status(t);
    if ((st & (LWS_ST_OPEN | LWS_ST_CLOSING)) && !(st & (LWS_ST_FAILED | LWS_ST_PEER_CLOSED)))
        S.pong_c = t;
}

/* UNLOCK_POLL of that change (the poll change itself is complete): pause */
static void pong_pause(struct tp *t, struct lws *wsi)
{
    S.pong_c = NULL;
    t->lws.pong_wait = 1;
    lws_rx_flow_control(wsi, LWS_RXFLOW_REASON_APPLIES | QJSWS_RXFLOW_PONG |
                                 LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

/* our writable callback: lws has no pong to write (any more), parse on */
static void pong_resume(struct tp *t, struct lws *wsi)
{
    t->lws.pong_wait = 0;
    lws_rx_flow_control(wsi, LWS_RXFLOW_REASON_APPLIES_ENABLE | QJSWS_RXFLOW_PONG |
                                 LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

/* ------------------------------------------------------------------ */
/* handing a connection over from lws to our framing                     */

/*
 * For ws:// connections lws set up ("framing" on, "connect" off), our framing
 * takes both directions over once the connection is established, and only
 * where lws' parser is between frames with no message unfinished and lws
 * holds no buffered bytes.
 *
 * lws' parser state is private; what we can know is when it is at a frame
 * boundary with no message unfinished: right after the handshake (nothing
 * parsed yet) and inside the rx callback for the last chunk of a message
 * (lws_is_final_fragment: FIN and no payload left).  What we must also know
 * is that lws holds no bytes it has read but not parsed (its buflist: bytes
 * that came in the same read as the 101 response or behind a message).
 *
 * After the handshake with nothing buffered we take over at once (the
 * normal case).  Otherwise lws keeps parsing; at the end of each message
 * the rx callback pauses it (rx flow control: lws stops parsing right there
 * and keeps the rest buffered) and, outside lws, own_handover() resumes it
 * and checks whether it holds anything; if not, we take over.
 */

/* lws holds no unparsed rx (for any connection it would parse now, so for
 * this one) and nothing of this connection is queued or half written on the
 * lws path, nor a pong of lws' (lws' parser is paused until it is written, so
 * its buffered rx would not count); the connection is open and not closing,
 * and its socket is not ours yet */
static int lws_idle(struct tp *t)
{
    return lws_service_adjust_timeout(tp_lws_context, 1, 0) && !lws_partial_buffered(t->wsi) &&
           !t->q.head && S.up.lws.status(t) == LWS_ST_OPEN && !t->lws.pong_wait &&
           !loop_fd_data(t->fd);
}

/* both directions are ours from now on */
static void own_take(struct tp *t)
{
    t->lws.hwait = 0;
    S.up.lws.take(t);
    loop_fd_set_data(t->fd, t); /* its readiness goes to our framing first */
    /* lws must never read this socket again (its own poll() in lws_service
     * would): rx flow control drops its POLLIN, while our registration
     * keeps it (own_events) */
    lws_rx_flow_control(t->wsi, 0);
}

/* LWS_CALLBACK_CLIENT_ESTABLISHED of a ws:// connection, "framing" on */
static void own_established(struct tp *t)
{
    int fd = (int)lws_get_socket_fd(t->wsi);
    if (fd < 0 || fd >= LOOP_FD_MAX)
        return; /* stays on lws */
    t->fd = fd;
    if (lws_idle(t))
        own_take(t); /* lws has not parsed a single frame byte */
    else
        t->lws.hwait = 1; /* frames came with the 101: lws parses them first */
}

/* lws rx callback, last chunk of a message, hwait: pause lws here */
static void own_message_end(struct tp *t)
{
    if (t->lws.hpaused)
        return;
    lws_rx_flow_control(t->wsi, 0);
    t->lws.hpaused = 1;
    t->lws.hnext = S.handover;
    S.handover = t;
}

static void own_unlink_handover(struct tp *t)
{
    struct tp **pp;
    if (!t->lws.hpaused)
        return;
    for (pp = &S.handover; *pp; pp = &(*pp)->lws.hnext) {
        if (*pp == t) {
            *pp = t->lws.hnext;
            break;
        }
    }
    t->lws.hpaused = 0;
    t->lws.hnext = NULL;
}

/* outside lws: resume every paused lws parser; take over where it holds
 * nothing (the other paused ones are flow controlled, so lws' answer
 * covers this connection and unpaused ones only: no false "idle").  A
 * failed connection stays paused until it is closed. */
static void own_handover(void)
{
    while (S.handover) {
        struct tp *t = S.handover;
        own_unlink_handover(t);
        if (!t->wsi || (S.up.lws.status(t) & LWS_ST_FAILED))
            continue;
        lws_rx_flow_control(t->wsi, 1);
        if (lws_idle(t))
            own_take(t);
    }
}

/* ------------------------------------------------------------------ */
/* the protocol callback                                                 */

static int conn_callback(struct tp *t, struct lws *wsi, enum lws_callback_reasons reason,
                         void *in, size_t len);

static int callback_ws(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                       void *in, size_t len)
{
    struct tp *t = (struct tp *)user;
    int lws_in, r;

    switch (reason) {
    case LWS_CALLBACK_ADD_POLL_FD: {
        struct lws_pollargs *pa = in;
        loop_fd_add(pa->fd, pa->events, &lws_handler, NULL);
        return 0;
    }
    case LWS_CALLBACK_DEL_POLL_FD:
        loop_fd_del(((struct lws_pollargs *)in)->fd);
        return 0;
    case LWS_CALLBACK_CHANGE_MODE_POLL_FD: {
        struct lws_pollargs *pa = in;
        loop_fd_mod(pa->fd, own_events(pa->fd, pa->events), own_events(pa->fd, pa->prev_events));
        if (S.lws_in && t && (pa->events & POLLOUT) && !S.destroying)
            pong_watch(t, wsi);
        return 0;
    }
    case LWS_CALLBACK_UNLOCK_POLL:
        if (S.pong_c && S.pong_c == t)
            pong_pause(t, wsi);
        return 0;
    case LWS_CALLBACK_LOCK_POLL:
        return 0;
    default:
        break;
    }

    if (!t || S.destroying)
        return 0;

    /* our code runs: what asks for POLLOUT from here on is not lws' own doing */
    lws_in = S.lws_in;
    S.lws_in = 0;
    r = conn_callback(t, wsi, reason, in, len); /* may free t */
    S.lws_in = lws_in;
    return r;
}

static int conn_callback(struct tp *t, struct lws *wsi, enum lws_callback_reasons reason,
                         void *in, size_t len)
{
    switch (reason) {
    case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
        /* lws is built without extensions and then ignores the server's
         * Sec-WebSocket-Extensions; we offer none, so any is a failure (RFC
         * 6455 4.1): refuse (lws reports CLIENT_CONNECTION_ERROR) */
        if (lws_hdr_total_length(wsi, WSI_TOKEN_EXTENSIONS) > 0)
            return 1;
        /* headers are still attached here: remember the chosen subprotocol */
        if (lws_hdr_copy(wsi, t->protocol, sizeof(t->protocol), WSI_TOKEN_PROTOCOL) < 0)
            t->protocol[0] = 0;
        return 0;

    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        S.up.lws.established(t);
        if (OPT(OPT_FRAMING) && !t->lws.secure)
            own_established(t);
        S.up.lws.opened(t);
        /* the lws path writes queued messages and our close frame when
         * writable; with own framing, close() queued the frame and the end
         * of this service call writes it */
        if (t->fr == &fr_lws && (t->q.head || (S.up.lws.status(t) & LWS_ST_CLOSE_REQUESTED)))
            lws_callback_on_writable(wsi);
        return 0;

    case LWS_CALLBACK_CLIENT_RECEIVE: {
        int first = lws_is_first_fragment(wsi);
        int final = lws_is_final_fragment(wsi);
        int binary = lws_frame_is_binary(wsi);
        size_t remain = (size_t)lws_remaining_packet_payload(wsi);
        /* always 0: a failed connection closes in the writable callback (fr_lws_fail) */
        if (S.up.lws.receive(t, in, len, first, final, binary, remain) < 0)
            return 0;
        /* lws_is_final_fragment(): FIN set and no payload left in the frame,
         * so lws' parser is between frames and no message is unfinished */
        if (t->lws.hwait && final)
            own_message_end(t);
        return 0;
    }

    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (t->lws.pong_wait)
            pong_resume(t, wsi);
        if (t->fr != &fr_lws)
            return S.up.lws.writable(t); /* our framing */
        if (S.up.lws.status(t) & LWS_ST_FAILED) {
            /* failed: our close frame (with the failure's code), then drop TCP */
            if (!t->lws.close_sent)
                fr_lws_send_close(t);
            return -1;
        }
        if (fr_lws_drain(t) < 0)
            return -1;
        if (t->q.head) {
            lws_callback_on_writable(wsi);
            return 0;
        }
        if ((S.up.lws.status(t) & LWS_ST_CLOSE_REQUESTED) && !t->lws.close_sent &&
            !lws_partial_buffered(wsi))
            return fr_lws_send_close(t);
        return 0;

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if (S.up.lws.peer_close(t, in, len)) {
            /* lws would echo it (rewriting only some bad codes): failed
             * instead, with our close frame written now, then drop TCP */
            if (!t->lws.close_sent)
                fr_lws_send_close(t);
            return -1;
        }
        /* the answer to our close frame: handshake complete, drop TCP (lws
         * answers a peer-initiated close itself) */
        return t->lws.close_sent ? -1 : 0;

    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        S.up.lws.error(t, in ? (const char *)in : "connection error");
        return 0;

    case LWS_CALLBACK_CLIENT_CLOSED:
        S.up.lws.closed(t);
        return 0;

    case LWS_CALLBACK_WSI_DESTROY:
        S.up.lws.destroyed(t); /* may free t */
        return 0;

    default:
        break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    {
        .name = "qjsws",
        .callback = callback_ws,
        .per_session_data_size = 0,
        .rx_buffer_size = 65536,
        .tx_packet_size = 64u << 20,
    },
    LWS_PROTOCOL_LIST_TERM
};

/* ------------------------------------------------------------------ */
/* our framing over lws' socket (after the hand-over)                    */

/* lws watches the socket for us: POLLOUT is its writable callback */
static void tp_lws_poll(struct tp *t, int events)
{
    if ((events & POLLOUT) && t->wsi)
        lws_callback_on_writable(t->wsi);
}

/* the close acknowledgement's timeout */
static void tp_lws_timeout(struct tp *t, int secs, const char *why)
{
    UNUSED(why);
    if (t->wsi)
        lws_set_timeout(t->wsi, secs ? PENDING_TIMEOUT_CLOSE_ACK : NO_PENDING_TIMEOUT, secs);
}

static void tp_lws_close(struct tp *t, const char *why)
{
    UNUSED(why);
    if (t->wsi)
        lws_set_timeout(t->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_SYNC);
}

/* only reachable at runtime teardown: disown the wsi */
static void tp_lws_abandon(struct tp *t)
{
    if (t->wsi)
        lws_set_wsi_user(t->wsi, NULL);
    t->wsi = NULL;
}

static void tp_lws_release(struct tp *t)
{
    own_unlink_handover(t);
    if (t->fd >= 0 && loop_fd_data(t->fd) == t)
        loop_fd_set_data(t->fd, NULL);
    t->wsi = NULL;
}

/* over wss://, libwebsockets' OpenSSL session while its wsi lives */
static int tp_lws_secinfo(struct tp *t, struct tp_secinfo *out)
{
#if defined(LWS_WITH_TLS) && !defined(LWS_WITH_MBEDTLS)
    SSL *ssl = t->wsi && t->lws.secure ? lws_get_ssl(t->wsi) : NULL;
    if (!ssl || !SSL_is_init_finished(ssl))
        return -1;
    tp_tls_describe(ssl, out);
    return 0;
#else
    UNUSED(t);
    UNUSED(out);
    return -1;
#endif
}

/* no open(): tp_lws_connect(), lws connects and does the upgrade too */
const struct tp_ops tp_lws = {
    .name = "lws", .open = NULL, .retry = NULL,
    .read = tp_fd_read, .write = tp_fd_write, .writev = tp_fd_writev, .pending = NULL,
    .poll = tp_lws_poll, .timeout = tp_lws_timeout, .close = tp_lws_close,
    .abandon = tp_lws_abandon, .release = tp_lws_release, .secinfo = tp_lws_secinfo,
    .flags = TP_WRITABLE_KILLS,
};

/* ------------------------------------------------------------------ */
/* the context, connecting, servicing                                    */

/*
 * lws finds a socket's wsi through a table.  With no fd_limit_per_thread it
 * sizes the table by the fd limit (ulimit -n) and indexes it by fd; with a
 * smaller fd_limit_per_thread it scans that many slots instead, for every
 * socket it services and twice, in full, for every connection it closes
 * (12,000 instructions per handshake with 1024 slots).  So let lws index when
 * its tables stay small (two of 8 bytes per fd: 1 MiB at 65,536 fds, zeroed
 * at creation); under a larger limit keep 1024 slots (1024 connections) and
 * the scans rather than touching tens of MiB.
 */
static unsigned lws_fd_limit(void)
{
    long open_max = sysconf(_SC_OPEN_MAX);
    return open_max > 0 && open_max <= 65536 ? 0 : 1024;
}

void tp_lws_init(const struct tp_up *up)
{
    S.up = *up;
    fr_lws_init(&S.up);
    S.destroying = 0;
}

static void creation_info(struct lws_context_creation_info *info)
{
    memset(info, 0, sizeof(*info));
    info->port = CONTEXT_PORT_NO_LISTEN;
    info->protocols = protocols;
    info->gid = (gid_t)-1;
    info->uid = (uid_t)-1;
    info->options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    /* wss://: the CA to trust instead of the system's store (certificate and host
     * name are always verified) */
    info->client_ssl_ca_filepath = g_ca_file;
}

/*
 * The context is made at the first connection lws sets up, not at start-up:
 * its OpenSSL initialisation and the system's CA store were most of qjs'
 * start-up, and a process whose connections are all ours never needs it.  Its
 * client TLS context trusts the CA file in force then; a wss:// connection
 * made after the CA file changed goes through a client vhost of its own,
 * made for that CA file (kept until the context goes).
 */
static struct {
    unsigned ca_gen;          /* the CA file of the context's own vhost */
    struct lws_vhost *vh;     /* the vhost of the CA file in force now, or NULL: the default */
    unsigned vh_gen;
    int nvh;
} V;

static int context(void)
{
    struct lws_context_creation_info info;
    if (tp_lws_context)
        return 0;
    creation_info(&info);
    info.pt_serv_buf_size = 65536;
    info.fd_limit_per_thread = lws_fd_limit();
    tp_lws_context = lws_create_context(&info);
    V.ca_gen = g_ca_gen;
    V.vh = NULL;
    return tp_lws_context ? 0 : -1;
}

/* the vhost whose client TLS context trusts the CA file in force; NULL: the default one */
static struct lws_vhost *ca_vhost(int *failed)
{
    struct lws_context_creation_info info;
    char name[32];
    *failed = 0;
    if (g_ca_gen == V.ca_gen)
        return NULL;
    if (V.vh && V.vh_gen == g_ca_gen)
        return V.vh;
    creation_info(&info);
    snprintf(name, sizeof(name), "qjsws-ca-%d", ++V.nvh);
    info.vhost_name = name;
    V.vh = lws_create_vhost(tp_lws_context, &info);
    V.vh_gen = g_ca_gen;
    *failed = V.vh == NULL;
    return V.vh;
}

void tp_lws_destroy(void)
{
    S.destroying = 1;
    if (tp_lws_context) {
        lws_context_destroy(tp_lws_context);
        tp_lws_context = NULL;
    }
}

int tp_lws_connect(struct tp *t, int secure, const char *host, int port, const char *path,
                   const char *hosthdr, const char *protos)
{
    struct lws_client_connect_info ci;
    int failed;
    if (context() < 0)
        return -1;
    if (loop_in_service())
        tp_lws_connected_ = 1;
    t->lws.secure = secure;
    t->q.free_blk = sbuf_free_blk;
    memset(&ci, 0, sizeof(ci));
    ci.context = tp_lws_context;
    ci.vhost = secure ? ca_vhost(&failed) : NULL;
    if (secure && failed)
        return -1;
    ci.address = host;
    ci.port = port;
    ci.path = path;
    ci.host = hosthdr;
    ci.origin = hosthdr;
    ci.protocol = protos && *protos ? protos : NULL;
    ci.local_protocol_name = "qjsws";
    ci.ssl_connection = secure ? LCCSCF_USE_SSL : 0;
    ci.userdata = t;
    ci.pwsi = &t->wsi;
    if (!lws_client_connect_via_info(&ci)) {
        t->wsi = NULL;
        return -1;
    }
    return 0;
}

int tp_lws_service_pending(void)
{
    int i;
    if (!tp_lws_context)
        return 0;
    for (i = 0; i < 4; i++) {
        own_handover();
        if (lws_service_adjust_timeout(tp_lws_context, 1, 0))
            return 0;
        S.lws_in = 1;
        lws_service_tsi(tp_lws_context, -1, 0);
        S.lws_in = 0;
    }
    own_handover();
    return !lws_service_adjust_timeout(tp_lws_context, 1, 0);
}

void tp_lws_service_timers(void)
{
    if (!tp_lws_context)
        return;
    S.lws_in = 1;
    lws_service(tp_lws_context, -1);
    S.lws_in = 0;
}
