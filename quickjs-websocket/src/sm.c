/* The connection's state machine (see sm.h). */
#include "sm.h"
#include "tp_lws.h"
#include "upgrade.h"
#include "wsclose.h"

#include <string.h>

static struct sm_up up;

void sm_init(const struct sm_up *u)
{
    up = *u;
}

void sm_start(struct sm *s, const struct tp_ops *ops, const struct framer *fr)
{
    s->state = ST_CONNECTING;
    s->close_code = 1005;
    s->fr.mapfd = -1;
    s->fr.tp.fd = -1;
    s->fr.tp.ops = ops;
    s->fr.tp.fr = fr;
}

const char *fail_text(int code)
{
    switch (code) {
    case 1007: return "invalid UTF-8 in text message";
    case 1009: return "message too big";
    default: return "protocol error";
    }
}

void sm_report_close(struct sm *s, int code, const char *reason, size_t rlen, int clean)
{
    if (s->closed_dispatched)
        return;
    s->closed_dispatched = 1;
    s->state = ST_CLOSED;
    up.close(s, code, reason, rlen, clean);
}

void sm_fail(struct sm *s, int code, const char *reason)
{
    struct tp *t = &s->fr.tp;
    size_t rl = strlen(reason);
    if (s->fail_code || s->closed_dispatched || !sm_live(s))
        return;
    if (rl > 123)
        rl = 123;
    s->fail_code = code;
    s->close_code = code;
    memcpy(s->close_reason, reason, rl);
    s->close_reason_len = rl;
    s->state = ST_CLOSING;
    t->fr->fail(t, code, reason, rl);
    up.error(s, reason);
}

void sm_close(struct sm *s, int code, const char *reason, size_t rlen)
{
    struct tp *t = &s->fr.tp;
    s->close_requested = 1;
    s->close_code = code;
    if (rlen)
        memcpy(s->close_reason, reason, rlen);
    s->close_reason_len = rlen;
    if (s->state == ST_CONNECTING) {
        s->aborted = 1;
        t->fr->abort(t);
    } else {
        s->state = ST_CLOSING;
        t->fr->close(t, code, s->close_reason, rlen);
    }
}

int sm_peer_close(struct sm *s, const uint8_t *p, size_t n)
{
    const char *why;
    int bad = wsc_body_problem(p, n, &why);
    if (bad) {
        sm_fail(s, bad, why);
        return bad;
    }
    s->peer_closed = 1;
    if (n >= 2) {
        size_t rl = n - 2;
        s->peer_code = (p[0] << 8) | p[1];
        if (rl > sizeof(s->peer_reason))
            rl = sizeof(s->peer_reason);
        memcpy(s->peer_reason, p + 2, rl);
        s->peer_reason_len = rl;
    } else {
        s->peer_code = 1005;
        s->peer_reason_len = 0;
    }
    if (s->state == ST_OPEN)
        s->state = ST_CLOSING;
    return 0;
}

void sm_opened(struct sm *s)
{
    s->state = ST_OPEN;
    up.open(s);
}

/*
 * The TCP connection is gone: report close.  wasClean only if the close
 * handshake completed (a close frame came and ours went out, RFC 6455
 * 7.1.4); without a close frame from the peer the code is 1006 (7.1.5).
 */
void sm_closed(struct sm *s)
{
    struct tp *t = &s->fr.tp;
    if (s->closed_dispatched)
        return;
    if (s->fail_code) {
        sm_report_close(s, s->fail_code, s->close_reason, s->close_reason_len, 0);
    } else if (s->peer_closed) {
        sm_report_close(s, s->peer_code, s->peer_reason, s->peer_reason_len, t->fr->clean(t));
    } else {
        /* an error only where nobody asked for the end */
        if (!s->aborted && !s->close_requested)
            up.error(s, "connection lost");
        sm_report_close(s, 1006, "", 0, 0);
    }
}

void sm_release(struct sm *s)
{
    upg_free(&s->fr);
    fr_release(&s->fr);
    s->state = ST_CLOSED;
    s->detached = 1;
}

/* ------------------------------------------------------------------ */
/* what the layers below report                                          */

/*
 * A connection on our own socket is over and the socket closed: the events
 * lws' CLIENT_CONNECTION_ERROR / CLIENT_CLOSED / WSI_DESTROY raise on the lws
 * path, then the binding lets go.  `why`: the error text of a connection that
 * never opened.
 */
void sm_tp_gone(struct tp *t, const char *why)
{
    struct sm *s = sm_of(t);
    if (!s->closed_dispatched) {
        if (s->state == ST_CONNECTING || s->aborted) {
            up.error(s, why ? why : "connection failed");
            sm_report_close(s, 1006, "", 0, 0);
        } else {
            sm_closed(s);
        }
    }
    up.detach(s); /* may free s */
}

void sm_fr_opened(struct fr *f)
{
    sm_opened(container_of(f, struct sm, fr));
}

unsigned sm_tp_status(struct tp *t)
{
    struct sm *s = sm_of(t);
    return (s->state == ST_OPEN ? LWS_ST_OPEN : 0) | (s->state == ST_CLOSING ? LWS_ST_CLOSING : 0) |
           (s->close_requested ? LWS_ST_CLOSE_REQUESTED : 0) | (s->fail_code ? LWS_ST_FAILED : 0) |
           (s->peer_closed ? LWS_ST_PEER_CLOSED : 0);
}

size_t sm_tp_close_body(struct tp *t, uint8_t out[125])
{
    struct sm *s = sm_of(t);
    if (s->close_code == 1005)
        return 0;
    out[0] = (uint8_t)(s->close_code >> 8);
    out[1] = (uint8_t)s->close_code;
    memcpy(out + 2, s->close_reason, s->close_reason_len);
    return 2 + s->close_reason_len;
}

void sm_tp_established(struct tp *t)
{
    sm_of(t)->state = ST_OPEN;
}

void sm_tp_opened(struct tp *t)
{
    sm_opened(sm_of(t));
}

int sm_tp_peer_close(struct tp *t, const uint8_t *p, size_t n)
{
    return sm_peer_close(sm_of(t), p, n);
}

void sm_tp_error(struct tp *t, const char *why)
{
    struct sm *s = sm_of(t);
    if (!s->closed_dispatched) {
        up.error(s, why);
        sm_report_close(s, 1006, "", 0, 0);
    }
}

void sm_tp_closed(struct tp *t)
{
    sm_closed(sm_of(t));
}

void sm_tp_destroyed(struct tp *t)
{
    struct sm *s = sm_of(t);
    if (s->detached)
        return;
    if (!s->closed_dispatched) {
        if (s->state == ST_CONNECTING || s->aborted)
            up.error(s, "connection failed");
        sm_report_close(s, 1006, "", 0, 0);
    }
    up.detach(s); /* may free s */
}
