"""A test-only echo server for the storm kind (test_storm_kind.py): it stops listening
once N upgrades have completed, keeping (and echoing on) the connections it has, so that
every reconnection of a storm is refused.

    storm_server.py --port 0 --listen-for N

Loopback only; prints WSBENCH-READY port=P; SIGTERM ends it.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from websockets.asyncio.server import Server, ServerConnection, serve


async def main(port: int, listen_for: int) -> None:
    upgraded = 0
    server: Server | None = None

    async def handler(ws: ServerConnection) -> None:
        nonlocal upgraded
        upgraded += 1
        if upgraded == listen_for and server is not None:
            server.close(close_connections=False)  # the listener goes; these connections stay
        async for message in ws:
            await ws.send(message)

    server = await serve(handler, "127.0.0.1", port, ping_interval=None, compression=None)
    print(f"WSBENCH-READY port={server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
    await stop


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--listen-for", type=int, required=True)
    args = parser.parse_args()
    asyncio.run(main(args.port, args.listen_for))
