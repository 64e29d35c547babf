/*
 * Close frames, with no JS, sockets or libwebsockets: which codes a close frame
 * may carry (RFC 6455 7.4.1, 7.4.2) and the check of a received close frame's
 * body (5.5.1, 7.1.6, 8.1).  Both native clients use these (the module on its
 * two receive paths, ours and lws'); the fuzz target wsproto_close compares
 * them with a reference.
 */
#ifndef WSPROTO_WSCLOSE_H
#define WSPROTO_WSCLOSE_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/*
 * May a close frame carry this code?  1000-1003 and 1007-1011 are defined by
 * RFC 6455, 1012-1014 registered with IANA since, 3000-4999 for libraries and
 * applications.  Never on the wire: 0-999 (not used), 1004 (reserved), 1005,
 * 1006 and 1015 (for reports only), 1016-2999 (reserved for future RFCs),
 * 5000 and up (outside every range).  Header-only.
 */
static inline int wsc_code_ok(int code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

/*
 * A received close frame's body that must fail the connection: 0 if it is
 * fine (empty, or a code that may be sent and a UTF-8 reason), else the code
 * to fail with and why: 1002 for a 1-byte body or a code no one may send,
 * 1007 for a reason that is not UTF-8.
 */
int wsc_body_problem(const uint8_t *p, size_t len, const char **why);

#pragma GCC visibility pop

#endif
