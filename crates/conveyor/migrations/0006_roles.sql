-- Checking roles (tester, reviewer, skeptic, extra): the project's own agent a step ran as
-- (null: a built-in prompt) and the verdict it gave (`{"verdict", "findings"}` JSON).
ALTER TABLE steps ADD COLUMN agent TEXT;
ALTER TABLE steps ADD COLUMN verdict TEXT;
-- Why the line's level is what it is (the planner's reason, or the last raise's).
ALTER TABLE lines ADD COLUMN level_why TEXT;
