-- The example's own table; Taskboard's schema is installed by `taskboard migrate`.
CREATE TABLE signups (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email text NOT NULL UNIQUE
);
