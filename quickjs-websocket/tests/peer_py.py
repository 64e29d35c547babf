"""Independent WebSocket peer for the quickjs-websocket tests (Python `websockets`).

Prints `WSBENCH-READY port=N` once listening on 127.0.0.1.  Behaviour by path:

  /            echo every message (same type, same bytes)
  /frag?n=N    echo every message as N fragments (text or binary kept)
  /badutf8     send one text frame holding invalid UTF-8, then wait
  /close?code=C&reason=R   close from the server side right after the handshake
  /ping        ping the client; send text "pong-ok" once the pong arrived
  /proto       echo; the negotiated subprotocol is sent as first message

Every close the server sees is reported on stdout as `CLOSE <code> <reason>`.
With --tls-cert/--tls-key it speaks TLS (wss://).
"""
import asyncio
import sys
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from testkit.wss import peer_context, peer_options


def report(ws):
    code = ws.close_code
    reason = ws.close_reason or ""
    print("CLOSE %s %s" % (code, reason), flush=True)


def split(data, n):
    size = len(data)
    out = []
    for i in range(n):
        a = size * i // n
        b = size * (i + 1) // n
        out.append(data[a:b])
    return out


async def handler(ws):
    url = urlsplit(ws.request.path)
    q = parse_qs(url.query)
    path = url.path
    try:
        if path == "/badutf8":
            await ws.send(b"ok\xff\xfe bad", text=True)
            await ws.wait_closed()
        elif path == "/close":
            code = int(q.get("code", ["1000"])[0])
            reason = q.get("reason", [""])[0]
            await ws.close(code, reason)
        elif path == "/ping":
            waiter = await ws.ping(b"hello")
            await asyncio.wait_for(waiter, 5)
            await ws.send("pong-ok")
            async for m in ws:
                await ws.send(m)
        elif path == "/frag":
            n = int(q.get("n", ["2"])[0])
            async for m in ws:
                await ws.send(split(m, n))
        else:
            if path == "/proto":
                await ws.send(ws.subprotocol or "")
            async for m in ws:
                await ws.send(m)
    except ConnectionClosed:
        pass
    finally:
        report(ws)


def select_subprotocol(conn, offered):
    for p in offered:
        if p in ("chat", "superchat"):
            return p
    return None


async def main(port, context):
    async with serve(handler, "127.0.0.1", port, max_size=None, compression=None,
                     select_subprotocol=select_subprotocol, ping_interval=None, ssl=context) as server:
        print("WSBENCH-READY port=%d" % server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    args = peer_options()
    try:
        asyncio.run(main(args.port, peer_context(args)))
    except KeyboardInterrupt:
        sys.exit(0)
