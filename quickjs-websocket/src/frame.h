/* own RFC 6455 client framing, opt "framing" (frame.c) */
#ifndef QJSWS_FRAME_H
#define QJSWS_FRAME_H

#include "qjsws.h"

#pragma GCC visibility push(hidden)

void framing_destroy(void);
void own_free_queue(conn *c);
int own_append(conn *c, int opcode, const uint8_t *p, size_t len);
int own_flush(conn *c);
void own_kick(conn *c);
void own_post_service(void);
void own_send_close(conn *c, int code, const char *reason, size_t rlen);
void own_release(conn *c);
void own_established(conn *c);
void own_message_end(conn *c);
void own_handover(void);
void own_read_all(void);
void service_one(int fd, short events, short revents);
/* a close frame's body that must fail the connection (RFC 6455 5.5.1, 7.4, 8.1):
 * 0, or the code to fail with (1002, 1007) and why; both receive paths use it */
int close_body_problem(const uint8_t *p, size_t len, const char **why);

#pragma GCC visibility pop

#endif
