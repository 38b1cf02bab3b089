-- Deploy taskboard:function_comments to pg
-- requires: cancel
-- requires: claim
-- requires: complete
-- requires: complete_many
-- requires: enqueue
-- requires: enqueue_many
-- requires: enqueue_periodic
-- requires: fail
-- requires: find_jobs
-- requires: get_job
-- requires: job_activity
-- requires: lease_state
-- requires: notify_runnable
-- requires: pause
-- requires: prune
-- requires: queue_overview
-- requires: release
-- requires: renew
-- requires: renew_many
-- requires: resume
-- requires: retry
-- requires: set_queue_limit
-- requires: version
--
-- Each function's contract header, kept by the database as its comment:
-- what it does, what it answers, which SQLSTATEs it raises; after an empty
-- line, notes on the implementation. A change that adds or reworks a
-- function from here on sets its comment beside its definition.

BEGIN;

\set owner_role :prefix _owner

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";

COMMENT ON FUNCTION taskboard.cancel(bigint) IS
$comment$cancel(job_id) -> boolean
An administrator stops a job: queued or running becomes cancelled with
finished_at. A holder's token stops being current, so its later renew,
complete, fail and release answer NULL/false.
true:  cancelled now.
false: the job is already finished (succeeded, dead, cancelled) or unknown.
Raises 22023 when job_id is NULL.$comment$;

COMMENT ON FUNCTION taskboard.claim(text,text,integer,interval) IS
$comment$claim(queue, worker, batch, lease) -> setof taskboard.claimed
Takes up to `batch` runnable jobs of `queue`: queued with run_at due, or
running with an expired lease, in order of priority (higher first), run_at,
then id. Each claimed job gets a fresh lease token, lease_expires_at =
clock + lease, attempt + 1, fence + 1, started_at = clock and
claimed_by = worker; the token is returned here and nowhere else, with
the fence (strictly increasing with every claim of the job, releases and
reclaims included), with the job's trace_context (the W3C trace
context its enqueuer stored, NULL when none), and, last, waited: how long
the job had been runnable (clock minus its run_at, or minus the expired
lease's deadline for a reclaim). Concurrent claimers
never receive the same job (FOR UPDATE SKIP LOCKED). An expired job that has used up its attempts
becomes dead (error 'lease expired') in the same call, is not returned and
does not count against `batch`. Fewer rows than `batch` means nothing else
is runnable for this caller now. Up to `batch` rows it looked at but did
not take stay locked, and skipped by other claimers, until the caller's
transaction ends: claim in a transaction of its own.
A paused queue (taskboard.pause) hands out nothing. A limited one
(taskboard.set_queue_limit) starts queued jobs only while fewer than
max_running of its jobs are running, however many workers claim at once;
in REPEATABLE READ or SERIALIZABLE a claim of a limited queue that raced
another one raises 40001 (serialization_failure) rather than count without it.
Raises 22023 when queue or worker is NULL, empty or longer than 200
characters, batch is outside 1..1000, or lease is NULL, not positive or
longer than 12 hours ('infinity' included).

plan_cache_mode = force_generic_plan with enable_seqscan = off: one plan
per session, made at the first call and kept until PostgreSQL invalidates
it (a change to the table, its indexes or its statistics, a VACUUM);
planning this five-CTE statement on every call cost about as much as
running it. A worker usually first claims an empty queue, and the plan
is then made for an empty table, so each step is written to be bounded
whatever the table held: the running jobs of this queue (its partial
index), the head of its queued index, and primary-key probes by id; with
sequential scans off, no step scans the table (tests/test_claim_plan.py).$comment$;

COMMENT ON FUNCTION taskboard.complete(bigint,uuid,jsonb) IS
$comment$complete(job_id, token, result) -> boolean
Marks the job succeeded with `result` and finished_at when `token` is the
current lease token, even if its lease expired, as long as nobody
reclaimed the job.
true:  the job is succeeded by this token; repeating the call with the
       same token after that success returns true again and changes nothing.
false: the token is not current (reclaimed, failed, released, cancelled,
       or never issued); nothing changes. Writes the caller made in the
       same transaction must then be rolled back by the caller.
Raises 22023 when job_id or token is NULL.$comment$;

COMMENT ON FUNCTION taskboard.complete_many(bigint[],uuid[],jsonb[]) IS
$comment$complete_many(job_ids, tokens, results) -> setof (job_id, completed)
complete for many jobs in one statement: job_ids[i] is completed with
tokens[i] and results[i] (results NULL: every result is NULL). Each row is
fenced on its own token and answered on its own, in input order:
completed is true when that job is succeeded by that token (now or by an
earlier call), false when the token is not current; a refused job changes
nothing. Rows are locked in job_id order, as renew_many locks them.
Raises 22023 when job_ids or tokens is NULL or holds a NULL, an array is
multidimensional, or the lengths of job_ids, tokens and (when given)
results differ. A NULL element of results means no result for that job.$comment$;

COMMENT ON FUNCTION taskboard.enqueue(text,jsonb,text,timestamp with time zone,integer,integer,text,jsonb) IS
$comment$enqueue(task, payload, queue, run_at, priority, max_attempts, dedupe_key, trace_context) -> bigint
Inserts a queued job, runnable from run_at (NULL = now), and returns its id.
trace_context (the caller's W3C trace context, e.g. {"traceparent": ...})
is stored with the job and handed to its holder by claim; NULL: none.
With dedupe_key: when an unfinished (queued or running) job of the same
queue and the same task holds that key, returns that job's id and inserts
nothing. A key is scoped to (queue, task, key): an unfinished job of
another task with the same key is not the same job, and a new one is
inserted. The unique index jobs_unfinished_task_dedupe_key makes this hold
under concurrent callers; in REPEATABLE READ or SERIALIZABLE a race may
raise 40001.
Sends NOTIFY taskboard, '<queue>' when the new job is runnable now.
Joins the caller's transaction: a rollback takes the job with it.
Raises 22023 when task or queue is NULL, empty or longer than 200
characters, payload, priority or max_attempts is NULL, max_attempts < 1,
dedupe_key is empty or longer than 400 characters, or run_at is
'infinity' or '-infinity', or trace_context is not a JSON object of
strings or is longer than 8192 bytes as text.
Raises 23505 when an unfinished job of the queue and task holds a
different key with the same SHA-256 as dedupe_key (no such pair is known):
the index cannot tell the two apart, and the other job is not the answer.
Calls of the seven-argument form of 0.1.0 to 0.3.0 resolve to this one:
the argument it gained comes last, with a default.$comment$;

COMMENT ON FUNCTION taskboard.enqueue_many(text,jsonb[],text,timestamp with time zone,integer,integer,text[],jsonb) IS
$comment$enqueue_many(task, payloads, queue, run_at, priority, max_attempts, dedupe_keys, trace_context) -> setof bigint
Enqueues one job of `task` per element of `payloads` in one round trip and
returns their ids in payload order. dedupe_keys pairs with payloads element
by element (a NULL element means no key) and behaves as in enqueue, scoped
to (queue, task, key): a key held by an unfinished job of the queue and
this task yields that job's id (a job of another task holding it does not
count), and a key repeated inside the array yields the id of its first
occurrence's job. Keys are inserted in key order, so concurrent calls with
overlapping keys wait for each other instead of deadlocking.
trace_context (the caller's W3C trace context) is stored with every job
the call inserts, as in enqueue: one call is made in one context.
An empty array returns no rows. At most one NOTIFY per call, and only when
a new job is runnable now. Joins the caller's transaction.
Raises 22023 when task or queue is NULL, empty or longer than 200
characters, payloads is NULL, multidimensional or holds a NULL, dedupe_keys
has a different length or holds an empty string or a key longer than 400
characters, priority or max_attempts is NULL, max_attempts < 1, or run_at
is 'infinity' or '-infinity', or trace_context is not a JSON object of
strings or is longer than 8192 bytes as text.
Raises 23505, writing nothing, when a key of dedupe_keys has the same
SHA-256 as a different key held by an unfinished job of the queue and task,
or as a different key of the same call (no such pair is known): the index
cannot tell the two apart, and the other job is not the answer.
Calls of the seven-argument form of 0.1.0 to 0.3.0 resolve to this one:
the argument it gained comes last, with a default.$comment$;

COMMENT ON FUNCTION taskboard.enqueue_periodic(text,timestamp with time zone,text,jsonb,text,integer,integer) IS
$comment$enqueue_periodic(schedule, slot, task, payload, queue, priority, max_attempts) -> bigint
Enqueues the job of one slot of a schedule (a time its cron fires, as the
caller computed it from the database clock) and returns its id: a queued
job of `task` whose run_at is `slot`, so get_job shows which slot it is.
Exactly once per slot, whatever the number of callers: the schedule's row
in taskboard.schedule_slots is compared and set (last_slot < slot) before
the job is inserted, and concurrent callers of one slot wait for that row,
then find the slot taken.
NULL: that slot, or a later one, was already enqueued; nothing changes.
So only the latest of the slots missed while no worker ran gets a job,
when a caller sends it first.
Sends NOTIFY taskboard, '<queue>' as enqueue does (the job is runnable
now). Joins the caller's transaction: a rollback frees the slot again.
In REPEATABLE READ or SERIALIZABLE a race may raise 40001.
Raises 22023 when schedule, task or queue is NULL, empty or longer than
200 characters, slot is NULL, not finite or later than the database
clock, or payload, priority or max_attempts is NULL, max_attempts < 1.$comment$;

COMMENT ON FUNCTION taskboard.fail(bigint,uuid,text,interval,boolean,text) IS
$comment$fail(job_id, token, error, retry_in, retry, traceback) -> text
The holder reports a failed attempt. The error is recorded with the
attempt, the worker and the time, and with the traceback when one is
given (key `traceback`, absent otherwise). With `retry` true and attempts
left the job is queued again at clock + retry_in (NULL: 2^attempt seconds
with +/-25 % jitter, capped at one hour); with none left, or with `retry`
false (a non-retryable error, whatever attempts are left and whatever
retry_in says), it becomes dead at once, with finished_at. Returns the
new state, 'queued' or 'dead'.
The traceback is bounded: one longer than 16384 characters keeps its
last 16000 (where the exception is), after a first line saying how many
characters were cut, so at most 16 KiB of characters is stored.
NULL: the token is not current; nothing changes.
Raises 22023 when job_id, token or retry is NULL, or retry_in is not
positive or longer than 12 hours ('infinity' included).
Calls by name of the four-argument form of 0.1.0 and 0.2.0 resolve to
this one: the two arguments it gained come last, with defaults.$comment$;

COMMENT ON FUNCTION taskboard.find_jobs(text,text,text,bigint,integer) IS
$comment$find_jobs(queue, state, task, after_id, max_rows) -> setof taskboard.job_info
Jobs for people and dashboards: those matching every filter given (NULL:
any), newest first by id, at most max_rows of them. Keyset paging: pass
the last job_id of a page as after_id to get the jobs older than it.
Never a token. For every role: get_job already shows any job to each of
them, and ids are consecutive.
Raises 22023 when queue or task is empty, state is not one of queued,
running, succeeded, dead or cancelled, or max_rows is NULL or outside
1..1000.$comment$;

COMMENT ON FUNCTION taskboard.get_job(bigint) IS
$comment$get_job(job_id) -> taskboard.job_info
What a producer may see of a job: everything but the lease token.
started_at is when its last claim started it (NULL until claimed).
errors lists each failed attempt as {error, attempt, worker, at}, with a
traceback when the worker sent one (fail bounds it). payload is what the
job was enqueued with; fence is the number of its latest claim (0 before
the first).
A row of NULLs for an unknown id.
Raises 22023 when job_id is NULL.$comment$;

COMMENT ON FUNCTION taskboard.job_activity(interval) IS
$comment$job_activity(recent) -> table of (minute_start, queue, succeeded, failed, dead, cancelled)
What happened within `recent`, per minute and queue, for charts:
  succeeded, dead, cancelled  jobs that finished so in that minute;
  failed                      attempts that failed in that minute (each
                              entry of a job's errors: a handler's failure,
                              retried or not, or a last attempt's lease
                              that expired).
Only minutes with something in them are returned, oldest first. It reads
the jobs finished within `recent` and the unfinished jobs that have
failed before, never the older finished ones.
Raises 22023 when recent is NULL, not positive or longer than 31 days.$comment$;

COMMENT ON FUNCTION taskboard.lease_state(bigint,uuid) IS
$comment$lease_state(job_id, token) -> text
Read-only answer for the holder, typically right before an external effect:
  held:      the token is current and its lease is live;
  expired:   the token is current but its lease is past its deadline and
             nobody has reclaimed the job yet (complete would still work);
  completed: the job succeeded with this token;
  lost:      anything else (reclaimed, failed, released, cancelled, unknown).
Raises 22023 when job_id or token is NULL.$comment$;

COMMENT ON FUNCTION taskboard.notify_runnable(text) IS
$comment$notify_runnable(queue) -> void
Internal: tells listeners that `queue` has a job runnable now, by
NOTIFY taskboard, '<queue>'. Called by enqueue, enqueue_many, release
(without delay) and retry; never granted to an application role.
A database or role setting taskboard.notify = off (or false, no, 0)
turns notifications off for deployments that prefer pure polling: NOTIFY
serialises notifying transactions on a cluster-wide lock at commit.
Raises nothing.$comment$;

COMMENT ON FUNCTION taskboard.pause(text) IS
$comment$pause(queue) -> boolean
Pauses `queue`: from the next claim on, claim hands out nothing from it.
Its running jobs carry on, renew, complete and fail as usual; its queued
jobs wait. A queue needs no declaration: pausing one that has no jobs yet
works. True when this call paused it, false when it already was paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.$comment$;

COMMENT ON FUNCTION taskboard.prune(interval,integer) IS
$comment$prune(older_than, batch) -> bigint
Deletes up to `batch` finished jobs (succeeded, cancelled, dead) whose
finished_at is before clock - older_than, oldest first, and returns how
many it deleted. Call again until it returns 0; small batches keep each
transaction short; concurrent callers skip each other's rows.
Workers call it too, for their retention setting; only finished jobs are
ever deleted.
The cutoff is read from the clock once, so the scan of finished jobs
stops at it: a call that finds nothing old enough reads next to nothing,
however many recent finished jobs the table keeps.
Raises 22023 when older_than is NULL, negative or longer than 36500 days
(100 years), or batch is NULL or < 1.$comment$;

COMMENT ON FUNCTION taskboard.queue_overview(interval) IS
$comment$queue_overview(recent) -> table of one row per queue
Each queue as it stands, for people and dashboards, read without counting
the finished jobs beyond `recent`: a table of millions of succeeded jobs
costs it nothing. Per queue:
  queued, running      jobs in those states now (queued includes those
                       whose run_at is still ahead);
  runnable             what claim could hand out now if the queue were not
                       paused or at its limit: queued jobs that are due,
                       and running jobs whose lease expired with attempts
                       left;
  oldest_runnable_at   since when the longest-waiting of those has been
                       runnable (its run_at, or its lease's expiry);
  dead, cancelled      all such jobs still kept (prune removes them);
  succeeded_recent, dead_recent, cancelled_recent
                       jobs that finished so within `recent`;
  paused, max_running  the queue's settings (false and NULL by default).
A queue is listed when it has unfinished, dead or cancelled jobs, jobs
finished within `recent`, or settings. Ordered by queue.
Raises 22023 when recent is NULL, not positive or longer than 31 days.$comment$;

COMMENT ON FUNCTION taskboard.release(bigint,uuid,interval) IS
$comment$release(job_id, token, delay) -> boolean
The holder hands the job back, typically at shutdown: it is queued again
at clock + delay and this claim is not counted as an attempt. Sends
NOTIFY taskboard, '<queue>' when delay is zero.
true:  released.
false: the token is not current; nothing changes.
Raises 22023 when job_id or token is NULL, or delay is NULL, negative or
longer than 12 hours ('infinity' included).$comment$;

COMMENT ON FUNCTION taskboard.renew(bigint,uuid,interval) IS
$comment$renew(job_id, token, lease) -> timestamptz
Extends the holder's lease to clock + lease and returns the new deadline,
when `token` is current and its lease has not yet expired.
NULL: the token is not current (reclaimed, completed, failed, released,
cancelled) or its lease already expired; nothing changes and the worker
must treat the job as lost.
Raises 22023 when job_id or token is NULL, or lease is NULL, not positive
or longer than 12 hours ('infinity' included).$comment$;

COMMENT ON FUNCTION taskboard.renew_many(bigint[],uuid[],interval) IS
$comment$renew_many(job_ids, tokens, lease) -> setof (job_id, lease_expires_at)
renew for many jobs in one statement: job_ids[i] is renewed with
tokens[i]. One row per input element, in input order; lease_expires_at is
the new deadline, or NULL where renewal was refused (token not current or
lease already expired: the job is lost to this worker). Rows are locked
in job_id order, as complete_many locks them, so one worker's renewer and
completer never deadlock.
Raises 22023 when job_ids or tokens is NULL, multidimensional or holds a
NULL, their lengths differ, or lease is NULL, not positive or longer than
12 hours ('infinity' included).$comment$;

COMMENT ON FUNCTION taskboard.resume(text) IS
$comment$resume(queue) -> boolean
Resumes a paused `queue`: claim hands out its jobs again, and listeners
are told when one is runnable now (NOTIFY, unless taskboard.notify =
off). True when this call resumed it, false when it was not paused.
Raises 22023 when queue is NULL, empty or longer than 200 characters.$comment$;

COMMENT ON FUNCTION taskboard.retry(bigint) IS
$comment$retry(job_id) -> boolean
An administrator gives a dead or cancelled job another chance: it is
queued again with its attempts reset; its error history is kept. It is
runnable now, and NOTIFY taskboard, '<queue>' is sent; except a cancelled
job whose last lease has not run out yet (cancelled while running, or
just after its holder handed it back): that one is runnable when the
lease ends. Until then its holder may still believe it holds the job
(cancel leaves the token and deadline it was given): its writes are
refused, but an effect outside the database is not, and a second holder
must not start beside it.
true:  queued again.
false: the job is not dead or cancelled (or unknown), or its dedupe_key is
       now held by another unfinished job of the queue; nothing changes.
Raises 22023 when job_id is NULL.$comment$;

COMMENT ON FUNCTION taskboard.set_queue_limit(text,integer) IS
$comment$set_queue_limit(queue, max_running) -> boolean
From the next claim on, claim never lets more than `max_running` jobs of
`queue` run at once, counted across all workers and also under
concurrent claimers (claimers of a limited queue take turns on its row).
Jobs already running over a lowered limit carry on; no new one starts
until the queue is under it. NULL removes the limit. Listeners are told
when a raised or removed limit leaves a job runnable now. True when this
call changed the limit, false when it already was `max_running`.
Raises 22023 when queue is NULL, empty or longer than 200 characters, or
max_running is below 1 (pause the queue to stop it).$comment$;

COMMENT ON FUNCTION taskboard.version() IS
$comment$version() -> text
The schema's release, for the driver's start-up check.
Raises nothing.$comment$;

RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
