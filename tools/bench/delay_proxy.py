#!/usr/bin/env python3
"""A TCP proxy that adds latency to every request on its way to an upstream S3 server:
the epoch workload's slow object store (tools/bench/run.py). Each chunk a client sends is
held --delay-ms before it is forwarded; a GET or HEAD is one chunk, so each request
reaches the upstream that much later. Answers flow back untouched. The latency is added
here, outside strata, so strata's own code path is what is measured.

    delay_proxy.py --listen 127.0.0.1:PORT --upstream 127.0.0.1:PORT --delay-ms 5
"""
import argparse
import asyncio


async def pump(reader, writer, delay):
    try:
        while True:
            data = await reader.read(256 * 1024)
            if not data:
                break
            if delay:
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--delay-ms", type=float, default=5.0)
    args = ap.parse_args()
    up_host, up_port = args.upstream.rsplit(":", 1)
    delay = args.delay_ms / 1000.0

    async def serve(client_reader, client_writer):
        try:
            up_reader, up_writer = await asyncio.open_connection(up_host, int(up_port))
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, up_writer, delay),
                             pump(up_reader, client_writer, 0))

    host, port = args.listen.rsplit(":", 1)
    server = await asyncio.start_server(serve, host, int(port))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
