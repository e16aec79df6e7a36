-- What the daemon tells Anton outside the app: one row per message to the Catcher (Telegram)
-- or PlanFix, written in the transaction of the change it reports, delivered by the sender
-- in id order. `dedupe` makes a second write of the same message a no-op.
CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY,
    channel     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    dedupe      TEXT NOT NULL UNIQUE,
    line_id     TEXT,
    question_id TEXT,
    -- The PlanFix task; for an `edit`, the id of the row whose message it changes.
    target      TEXT,
    -- What it says: `{text, buttons}` for Telegram, `{round}` for a PlanFix report (rendered
    -- when sent, from the line as it is then).
    body        TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'pending',
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_at     INTEGER NOT NULL,
    last_error  TEXT,
    -- Written at night: sent in the digest when the night ends.
    held        INTEGER NOT NULL DEFAULT 0,
    -- The digest row that carries a held message.
    digest_id   INTEGER,
    -- What became of what it asked (the answer given, "accepted"): shown by an edit.
    resolved    TEXT,
    -- The Telegram message id, or the PlanFix comment id.
    remote_id   TEXT,
    created_at  INTEGER NOT NULL,
    sent_at     INTEGER
);
CREATE INDEX outbox_due ON outbox(channel, state, id);
CREATE INDEX outbox_by_question ON outbox(question_id);
CREATE INDEX outbox_by_line ON outbox(line_id);

-- The PlanFix task a line reports to when done.
ALTER TABLE lines ADD COLUMN planfix_task TEXT;
-- The state a line left when a condition re-checked every minute blocked it (the vault):
-- it returns there when the condition clears.
ALTER TABLE lines ADD COLUMN blocked_from TEXT;
