"""A request cache in SQLite: interrupted runs resume, repeated runs cost nothing.

One file per cache directory (``<cache_dir>/requests.sqlite``). Keys are SHA-256 hashes of
(namespace, fingerprint, input); values are JSON. Writes commit immediately, so a killed
run loses at most the batch in flight.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from figlang.core.paths import default_cache_dir


def cache_key(*parts: Any) -> str:
    """A stable key for JSON-able parts (dict keys sorted, so argument order cannot matter)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class RequestCache:
    FILENAME = "requests.sqlite"

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory else default_cache_dir() / "cache"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / self.FILENAME
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, namespace TEXT, value TEXT NOT NULL)")
        self._conn.commit()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Any | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        keys = list(keys)
        found: dict[str, Any] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, value in self._conn.execute(f"SELECT key, value FROM entries WHERE key IN ({marks})", chunk):
                    found[key] = json.loads(value)
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put(self, key: str, value: Any, namespace: str = "") -> None:
        self.put_many([(key, value)], namespace)

    def put_many(self, items: Iterable[tuple[str, Any]], namespace: str = "") -> None:
        rows = [(k, namespace, json.dumps(v, ensure_ascii=False)) for k, v in items]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO entries (key, namespace, value) VALUES (?, ?, ?)", rows)
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
