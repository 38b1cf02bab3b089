-- MEASUREMENT ONLY (bench/claimcost.py --taskboard-sql), DROPS what other
-- functions need: the jobs table without the four indexes claim's common
-- path never reads (a claimed job enters none of them). No gain measured.
DROP INDEX taskboard.jobs_failed_by_queue;
DROP INDEX taskboard.jobs_held_by_queue;
DROP INDEX taskboard.jobs_unfinished_last_failure;
DROP INDEX taskboard.jobs_unfinished_task_dedupe_key;
