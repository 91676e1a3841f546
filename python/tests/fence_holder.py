"""A lock holder in a process of its own, for tests/fence.rs's scenario: it takes the lock with
goblin_redis's Lock, says its fencing token, works a while (the test pauses it there with
SIGSTOP, past its lease), then writes to the resource with its token and says what the resource
answered.

    python fence_holder.py SERVER_PORT STORE_PORT LOCK_NAME LEASE_SECONDS WORK_SECONDS
"""

from __future__ import annotations

import socket
import sys
import time

import redis

from goblin_redis.lock import Lock


def main(server_port: int, store_port: int, name: str, lease: float, work: float) -> None:
    client = redis.Redis(host="127.0.0.1", port=server_port)
    lock = Lock(client, name, timeout=lease)
    if not lock.acquire(blocking=False):
        print("not acquired", flush=True)
        return
    print(f"token {lock.fencing_token}", flush=True)
    time.sleep(work)
    with socket.create_connection(("127.0.0.1", store_port)) as store:
        store.sendall(f"WRITE {lock.fencing_token} written by the first holder\n".encode())
        print(store.makefile().readline().strip(), flush=True)


if __name__ == "__main__":
    server, store, name, lease, work = sys.argv[1:]
    main(int(server), int(store), name, float(lease), float(work))
