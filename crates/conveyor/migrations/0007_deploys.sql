-- Deploys after a line's merge. A row left `running` by a dead daemon is the deploy lock of its
-- project across the restart: the health check decides whether that deploy took.
CREATE TABLE deploys (
    id              INTEGER PRIMARY KEY,
    line_id         TEXT NOT NULL REFERENCES lines(id),
    project_id      TEXT NOT NULL,
    commit_sha      TEXT NOT NULL,
    previous_commit TEXT NOT NULL,
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    outcome         TEXT NOT NULL DEFAULT 'running',
    output_tail     TEXT NOT NULL DEFAULT '',
    health          TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX deploys_by_project ON deploys(project_id, started_at);
CREATE INDEX deploys_by_line ON deploys(line_id, started_at);
