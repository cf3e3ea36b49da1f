"""The relay of a proxied sandbox, run inside its own container (`python3 -c SOURCE LISTEN HOST
PORT`, standard library only): every connection to LISTEN is piped to HOST:PORT (the run's model
proxy), both ways, until either side closes. It forwards to that one address only, whatever the
client sends, so the agent beside it reaches nothing else through it. Prints `ready` once listening."""

import contextlib
import socket
import sys
import threading

BUFFER = 65536


def pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy until `source` ends, then pass the end on (half-close), so a streamed answer flows."""
    try:
        while data := source.recv(BUFFER):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def serve(client: socket.socket, target: tuple[str, int]) -> None:
    try:
        upstream = socket.create_connection(target, timeout=10)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
    back.start()
    pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main() -> None:
    listen, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    server = socket.create_server(("0.0.0.0", listen), backlog=128)
    print("ready", flush=True)
    while True:
        client, _ = server.accept()
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=serve, args=(client, (host, port)), daemon=True).start()
        except (OSError, RuntimeError):  # out of threads (the pids cap): this connection fails, the relay stays
            client.close()


if __name__ == "__main__":
    main()
