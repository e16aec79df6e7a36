-- GET /api/lines without a state filter sorts by priority and age.
CREATE INDEX lines_by_priority ON lines(priority DESC, created_at);
