"""Worker: appends messages the way Python Hermes does (sqlite3 with a 1 s busy
timeout, BEGIN IMMEDIATE, then up to 15 attempts with a random 20-150 ms pause
on "database is locked"), until killed. Same output lines as _writer.ts:
`ready python`, `try <session> <token> <ms>`, `ack <token> <id> <session> <ms>`;
`failed <message>` and exit 1 when a write fails for good.

Arguments: path, name (token prefix), session id, seed, start file.
"""
import os
import random
import sqlite3
import sys
import time

path, name, session, seed, start = sys.argv[1:6]
rng = random.Random(int(seed))
db = sqlite3.connect(path, timeout=1.0, isolation_level=None)
db.execute("PRAGMA foreign_keys=ON")
db.execute(
    "INSERT OR IGNORE INTO sessions (id, source, started_at) VALUES (?, 'python', ?)",
    (session, time.time()),
)
print("ready python", flush=True)
while not os.path.exists(start):
    time.sleep(0.002)

i = 0
while True:
    token = f"{name}x{i}"
    print(f"try {session} {token} {int(time.time() * 1000)}", flush=True)
    for attempt in range(15):
        try:
            db.execute("BEGIN IMMEDIATE")
            cursor = db.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
                (session, f"hello {token} from python", time.time()),
            )
            message_id = cursor.lastrowid
            db.execute(
                "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (session,)
            )
            db.execute("COMMIT")
            break
        except sqlite3.OperationalError as error:
            try:
                db.execute("ROLLBACK")
            except sqlite3.OperationalError:
                pass
            if "locked" not in str(error) and "busy" not in str(error):
                print(f"failed {error}", flush=True)
                sys.exit(1)
            if attempt == 14:
                print(f"failed {error} after 15 attempts", flush=True)
                sys.exit(1)
            time.sleep(rng.uniform(0.020, 0.150))
    print(f"ack {token} {message_id} {session} {int(time.time() * 1000)}", flush=True)
    i += 1
    time.sleep(rng.uniform(0.0, 0.005))
