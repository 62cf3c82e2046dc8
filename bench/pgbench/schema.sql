-- Scratch tables for bench/pgbench.py: the shape of one capture transaction
-- (api.md 5): the per-scope journal head, the Source row, the capture attempt.
-- They live in their own schema of the bench database and never touch the
-- service's tables.
DROP SCHEMA IF EXISTS bench_pgshape CASCADE;
CREATE SCHEMA bench_pgshape;
SET search_path = bench_pgshape;

CREATE TABLE scope (scope_id varchar(256) PRIMARY KEY);

CREATE TABLE journal_head (
    scope_id varchar(256) PRIMARY KEY REFERENCES scope,
    last_position bigint NOT NULL
);

CREATE TABLE source (
    id bigserial PRIMARY KEY,
    scope_id varchar(256) NOT NULL REFERENCES scope,
    source_type varchar(64) NOT NULL,
    source_id varchar(256) NOT NULL,
    position bigint NOT NULL,
    content text NOT NULL,
    metadata jsonb NOT NULL,
    is_working_note boolean NOT NULL,
    session_id varchar(256),
    note_kind varchar(32),
    expires_at timestamptz,
    value_digest char(64) NOT NULL,
    content_digest varchar(71) NOT NULL,
    created_at timestamptz NOT NULL,
    created_by varchar(150) NOT NULL,
    request_id varchar(16) NOT NULL,
    CONSTRAINT source_identity_uniq UNIQUE (scope_id, source_type, source_id),
    CONSTRAINT source_position_uniq UNIQUE (scope_id, position)
);
CREATE INDEX source_note_session_idx ON source (scope_id, session_id, position)
    WHERE is_working_note;

CREATE TABLE capture_attempt (
    id bigserial PRIMARY KEY,
    scope_id varchar(256) NOT NULL,
    source_type varchar(64) NOT NULL,
    source_id varchar(256) NOT NULL,
    outcome varchar(16) NOT NULL,
    reason varchar(32),
    value_digest char(64) NOT NULL,
    principal varchar(150) NOT NULL,
    request_id varchar(16) NOT NULL,
    at timestamptz NOT NULL
);
CREATE INDEX capture_attempt_identity_idx
    ON capture_attempt (scope_id, source_type, source_id, id);

INSERT INTO scope VALUES ('scp_pgbench');
INSERT INTO journal_head VALUES ('scp_pgbench', 0);
