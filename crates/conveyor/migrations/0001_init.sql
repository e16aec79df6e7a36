-- The queue on disk: projects, lines, steps, runs, journal entries, questions.
-- Times are unix milliseconds (UTC).

CREATE TABLE projects (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL UNIQUE,
    repo_path   TEXT NOT NULL,
    main_branch TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE lines (
    id              TEXT PRIMARY KEY NOT NULL,
    project_id      TEXT NOT NULL REFERENCES projects(id),
    title           TEXT NOT NULL,
    task            TEXT NOT NULL,
    priority        INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL,
    level           TEXT,
    session_id      TEXT NOT NULL,
    -- 1 once a run of this session reached system/init: later runs use --resume.
    session_started INTEGER NOT NULL DEFAULT 0,
    -- The session's cumulative total_cost_usd as last reported (a step's cost is the delta).
    session_cost    REAL NOT NULL DEFAULT 0,
    branch          TEXT NOT NULL,
    worktree        TEXT,
    -- The commit the worktree is at after the last successful step.
    checkpoint      TEXT,
    reason          TEXT,
    park_until      INTEGER,
    gate_failures   INTEGER NOT NULL DEFAULT 0,
    journal_offset  INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX lines_by_state ON lines(state, priority DESC, created_at);
CREATE INDEX lines_by_project ON lines(project_id, state);

CREATE TABLE steps (
    id          TEXT PRIMARY KEY NOT NULL,
    line_id     TEXT NOT NULL REFERENCES lines(id) ON DELETE CASCADE,
    n           INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    title       TEXT NOT NULL,
    task        TEXT NOT NULL,
    checks      TEXT NOT NULL DEFAULT '[]',
    state       TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    error       TEXT,
    -- Why the next attempt starts from a rolled-back worktree (told to the agent).
    rolled_back TEXT,
    checkpoint  TEXT,
    UNIQUE (line_id, n)
);

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    step_id         TEXT NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    line_id         TEXT NOT NULL REFERENCES lines(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    attempt         INTEGER NOT NULL,
    resumed         INTEGER NOT NULL,
    pid             INTEGER,
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    outcome         TEXT NOT NULL,
    exit_code       INTEGER,
    init_seen       INTEGER NOT NULL DEFAULT 0,
    session_total   REAL,
    cost_usd        REAL NOT NULL DEFAULT 0,
    estimate_usd    REAL NOT NULL DEFAULT 0,
    input_tokens    INTEGER NOT NULL DEFAULT 0,
    output_tokens   INTEGER NOT NULL DEFAULT 0,
    cache_read      INTEGER NOT NULL DEFAULT 0,
    cache_write     INTEGER NOT NULL DEFAULT 0,
    duration_ms     INTEGER,
    result          TEXT,
    stderr_tail     TEXT,
    permission_denials TEXT,
    hook_blocks     INTEGER NOT NULL DEFAULT 0,
    log_path        TEXT
);
CREATE INDEX runs_by_step ON runs(step_id);
CREATE INDEX runs_by_finish ON runs(finished_at);
CREATE INDEX runs_running ON runs(outcome) WHERE outcome = 'running';

CREATE TABLE journal (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    line_id     TEXT NOT NULL REFERENCES lines(id) ON DELETE CASCADE,
    step_id     TEXT,
    -- Byte offset of the entry in the line's journal file: ingestion is idempotent.
    offset      INTEGER NOT NULL,
    kind        TEXT,
    text        TEXT,
    options     TEXT NOT NULL DEFAULT '[]',
    default_opt TEXT,
    why         TEXT,
    reversible  INTEGER,
    expensive   INTEGER,
    valid       INTEGER NOT NULL,
    error       TEXT,
    raw         TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (line_id, offset)
);

CREATE TABLE questions (
    id          TEXT PRIMARY KEY NOT NULL,
    line_id     TEXT NOT NULL REFERENCES lines(id) ON DELETE CASCADE,
    journal_id  INTEGER NOT NULL REFERENCES journal(id) ON DELETE CASCADE,
    status      TEXT NOT NULL,
    answer      TEXT,
    delivered   INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    answered_at INTEGER
);
CREATE INDEX questions_by_line ON questions(line_id);

CREATE TABLE rate_limits (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER,
    observed_at INTEGER NOT NULL,
    status      TEXT NOT NULL,
    resets_at   INTEGER,
    limit_type  TEXT,
    utilization REAL,
    raw         TEXT NOT NULL
);

-- Account-wide facts: e.g. `park_until` after a usage limit (no step starts before it).
CREATE TABLE account (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
