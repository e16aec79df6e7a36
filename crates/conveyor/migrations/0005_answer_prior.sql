-- An answer can be taken back until its `answer` step starts: the status the question had
-- before it was answered (validated, decided or duplicate) is kept to return to.
ALTER TABLE questions ADD COLUMN prior_status TEXT;
-- When a step's last attempt started: an answer given before it reached that attempt's prompt
-- and can no longer change.
ALTER TABLE steps ADD COLUMN started_at INTEGER;
