-- The planner's guess of a plan step's size (`"size"` in the plan: xs, s, m, l, xl; NULL when
-- the plan gave none and for the steps the daemon adds). The budget estimates a sized step
-- from the finished runs of its kind and size.
ALTER TABLE steps ADD COLUMN size TEXT CHECK (size IN ('xs', 's', 'm', 'l', 'xl'));
