"""The dashboard (extra taskboard-pg[web]): `taskboard dashboard`.

Pages for the queues, the jobs, one job and the schedules, read through the
SQL API (queue_overview, job_activity, find_jobs_summary, get_job, schedules); the
actions (cancel, retry, pause, resume, set a queue's limit) are offered only
when the dashboard's login may take them, and every one is a CSRF-checked
POST. Server-rendered HTML, one small inline script for live refresh, no
build step.
"""
