#!/usr/bin/env python3
"""A server at a network distance, for `make bench`: forwards connections from a unix socket to another one,
holding every chunk of bytes for DELAY_MS in each direction (so a round trip costs twice that), in order.

    delay-proxy.py LISTEN_SOCKET TARGET_SOCKET DELAY_MS

The replication bench puts it in front of the private PostgreSQL cluster to measure what the shipper's
connection pool does when each query costs a round trip, as it does to a server in another room or building.
"""
import asyncio
import sys


async def pump(reader, writer, delay):
    """Copies reader to writer, each chunk delivered `delay` seconds after it arrived, in arrival order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                writer.close()
                return
            writer.write(data)
            await writer.drain()

    delivering = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(65536)
            await queue.put((loop.time() + delay, data or None))
            if not data:
                break
        await delivering
    except (ConnectionError, asyncio.CancelledError):
        delivering.cancel()
        writer.close()


async def main(listen, target, delay):
    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_unix_connection(target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            pump(client_reader, server_writer, delay), pump(server_reader, client_writer, delay),
            return_exceptions=True)

    server = await asyncio.start_unix_server(handle, path=listen)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    listen_path, target_path, delay_ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
    asyncio.run(main(listen_path, target_path, delay_ms / 1000))
