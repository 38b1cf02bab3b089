-- The raw-SQL floor: a bare queue table and nothing else (no functions, no
-- triggers, no NOTIFY), so that pgbench measures what PostgreSQL itself
-- allows for the minimal correct claim/complete cycle on this server.
CREATE TABLE floor_jobs (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    state            text NOT NULL DEFAULT 'queued',
    payload          jsonb NOT NULL DEFAULT '{}',
    token            uuid,
    lease_expires_at timestamptz
);

-- What claim reads: queued jobs in id order.
CREATE INDEX floor_jobs_queued ON floor_jobs (id) WHERE state = 'queued';
