-- Run history of the Deepwork page: every run, what it proposed, and what was written.
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    folder      TEXT    NOT NULL,
    question    TEXT    NOT NULL,
    files       TEXT    NOT NULL,            -- JSON array of the ticked paths
    started_at  TEXT    NOT NULL,            -- RFC 3339
    finished_at TEXT,
    stop_reason TEXT,                        -- no_requests | steps_exhausted | loop
    steps       TEXT    NOT NULL DEFAULT '[]', -- JSON array of deepwork steps
    answer      TEXT,
    error       TEXT
);

CREATE TABLE proposed (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    path      TEXT    NOT NULL,
    content   TEXT    NOT NULL,
    truncated INTEGER NOT NULL,
    -- The file on disk when the answer arrived (FNV-1a 64 of its bytes, hex); NULL: it did
    -- not exist. A different hash at write time means someone changed it since.
    disk_hash TEXT,
    PRIMARY KEY (run_id, path)
);

CREATE TABLE writes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    path       TEXT    NOT NULL,
    backup     TEXT,
    written_at TEXT    NOT NULL
);

CREATE INDEX writes_by_run ON writes (run_id);
