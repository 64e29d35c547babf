/*
 * The client's opening handshake over any transport (upgrade.c, opt
 * "connect"): the upgrade request written as soon as the transport takes it,
 * the 101 checked (handshake_core.c), then the connection is on our framing
 * from its first byte.  own_io() is where a transport's readiness enters our
 * side of a connection: the upgrade while it runs, our framing after.
 */
#ifndef QJSWS_UPGRADE_H
#define QJSWS_UPGRADE_H

#include "frame.h"

#pragma GCC visibility push(hidden)

/* what the upgrade reports goes up through the framing layer's struct fr_up
 * (set at init by service.c) */
void upg_init(const struct fr_up *up);

/* does connect() set this connection up itself (our socket, our handshake)? */
int upg_wanted(int secure);

/*
 * Connect over transport `ops` and start the upgrade (`hosthdr`: the Host
 * header's value; `protos`: offered subprotocols, or NULL; `pmd`:
 * permessage-deflate offered with these parameters, or NULL: not offered).
 * 0 under way (events follow), -1 failed at once (*why; nothing is
 * registered, no event was raised).  A server that agrees to deflate leaves
 * f->pmd set once the connection is open.
 */
int upg_start(struct fr *f, const struct tp_ops *ops, const char *host, int port,
              const char *path, const char *hosthdr, const char *protos,
              const struct pmd_params *pmd, const char **why);

/* the connection is detached: free what the upgrade still holds */
void upg_free(struct fr *f);

/* a transport's readiness for our side of the connection (tp_up.io) */
void own_io(struct tp *t, short revents);

#pragma GCC visibility pop

#endif
