-- A queue may discard its jobs at their accepted completion
-- (taskboard.set_queue_discard): the setting, and an index of the queues
-- that have it, so a completion asks one small index whether any does.
ALTER TABLE taskboard.queues ADD COLUMN discard_succeeded boolean NOT NULL DEFAULT false;
CREATE INDEX queues_discarding ON taskboard.queues (queue) WHERE discard_succeeded;
COMMENT ON COLUMN taskboard.queues.discard_succeeded IS
    'true: an accepted completion deletes the job, its history with it, instead of keeping it succeeded (set_queue_discard).';
COMMENT ON TABLE taskboard.queues IS
    'Queue settings (paused, limits, discard_succeeded). Written only by the taskboard functions.';
