-- Why a line waits or stopped, as a code (conveyor_api::ReasonCode) beside the text in `reason`.
-- Lines stopped before codes existed keep their text and no code.
ALTER TABLE lines ADD COLUMN reason_code TEXT;
