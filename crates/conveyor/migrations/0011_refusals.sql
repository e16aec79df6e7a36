-- What the sandbox around an agent run refused (DESIGN.md, "Containment"): a write outside
-- what the run may write, a host the proxy did not let through, a ref put back after the run.
-- One row per run and thing tried: a run that tried the same thing twice shows it once.
-- `question_id` is the daemon's question to Anton it raised (a refused host), or NULL.
CREATE TABLE refusals (
    id          INTEGER PRIMARY KEY,
    line_id     TEXT NOT NULL REFERENCES lines(id) ON DELETE CASCADE,
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('write', 'host', 'ref')),
    what        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    question_id TEXT,
    UNIQUE (run_id, kind, what)
);
CREATE INDEX refusals_by_line ON refusals(line_id, at);
