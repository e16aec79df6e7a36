-- The pools' real size as the server's utilisation shows it: one row per `rate_limit_event`
-- that gave a window's utilisation, with our own spending in that window at that moment
-- (finished runs + the live cost of the running ones). `size_usd` = spent / utilisation.
CREATE TABLE calibration (
    id          INTEGER PRIMARY KEY,
    pool        TEXT NOT NULL,
    observed_at INTEGER NOT NULL,
    run_id      INTEGER,
    utilization REAL NOT NULL,
    spent_usd   REAL NOT NULL,
    size_usd    REAL NOT NULL
);
CREATE INDEX calibration_pool ON calibration (pool, id);
