-- The judge (DESIGN.md, "The judge and the morning list"): every journal fork and question has
-- a `questions` row with its kind and where it stands, who decided that and why.
ALTER TABLE questions ADD COLUMN kind TEXT NOT NULL DEFAULT 'question';
-- `agent` | `judge` | `daemon`: who set the status (none while unvalidated).
ALTER TABLE questions ADD COLUMN decided_by TEXT;
ALTER TABLE questions ADD COLUMN verdict_why TEXT;
ALTER TABLE questions ADD COLUMN duplicate_of TEXT;
ALTER TABLE questions ADD COLUMN urgent INTEGER NOT NULL DEFAULT 0;
-- Times it was sent back to the line's session; after 2 it is validated.
ALTER TABLE questions ADD COLUMN reworks INTEGER NOT NULL DEFAULT 0;
-- The step whose reads count for the "read the memory first" rule: the step that wrote the
-- entry, then the rework step that took it back.
ALTER TABLE questions ADD COLUMN from_step TEXT;
-- While `rework`: the step carrying it back to the line's session.
ALTER TABLE questions ADD COLUMN rework_step TEXT;
ALTER TABLE questions ADD COLUMN validated_at INTEGER;
CREATE INDEX questions_by_status ON questions(status, line_id);

UPDATE questions SET from_step = (SELECT step_id FROM journal WHERE journal.id = questions.journal_id);
-- Old rows: a dismissed question is a decided one; the rest were shown to Anton as asked.
UPDATE questions SET status = 'decided', decided_by = 'daemon',
    verdict_why = 'dismissed before the judge existed'
    WHERE status = 'dismissed';
UPDATE questions SET status = 'validated', decided_by = 'daemon',
    verdict_why = 'asked before the judge existed: shown as asked', validated_at = created_at
    WHERE status = 'unvalidated';
UPDATE questions SET validated_at = created_at WHERE status = 'answered';
-- Forks had no row: their default was taken.
INSERT INTO questions (id, line_id, journal_id, status, created_at, kind, decided_by,
        verdict_why, from_step)
    SELECT lower(hex(randomblob(16))), line_id, id, 'decided', created_at, 'fork', 'agent',
        'taken by default before the judge existed', step_id
    FROM journal WHERE kind = 'fork';

-- A step that runs in a session of its own (the judge): that session's id.
ALTER TABLE steps ADD COLUMN session_id TEXT;
