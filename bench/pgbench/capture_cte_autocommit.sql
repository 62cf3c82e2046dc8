-- The data-modifying CTE the service sends on PostgreSQL (sources/journal.py),
-- alone, in autocommit: identity lookup, then head UPDATE ... RETURNING feeding
-- the Source INSERT feeding the attempt INSERT. One
-- statement is one transaction, so the whole capture is one round trip and the
-- journal head's row lock is released by the commit inside the server, without
-- waiting for a client to send COMMIT.
-- Source ids are wn-pgbench-c<client>-<n>, n counting per client (pgbench -D k=0),
-- like the wrk workloads' per-thread counters.
\set k :k + 1
WITH existing AS (
    SELECT position, value_digest FROM bench_pgshape.sources_contentsource
    WHERE scope_id = 'scp_pgbench' AND source_type = 'content'
      AND source_id = 'wn-pgbench-c' || :client_id || '-' || :k
), head AS (
    UPDATE bench_pgshape.sources_sourcejournalhead
    SET last_position = last_position + 1
    WHERE scope_id = 'scp_pgbench' AND NOT EXISTS (SELECT 1 FROM existing)
    RETURNING last_position
), source AS (
    INSERT INTO bench_pgshape.sources_contentsource (scope_id, source_type,
        source_id, position, content, metadata, is_working_note, session_id,
        note_kind, expires_at, value_digest, content_digest, created_at,
        created_by, request_id)
    SELECT 'scp_pgbench', 'content', 'wn-pgbench-c' || :client_id || '-' || :k, head.last_position,
        '"Inspected wn-pgbench: the tokenizer keeps state between calls, so a second parse of the same buffer starts mid-token. Checked the reset path; it is only reached on error."',
        '{"kind": "working_note", "session_id": "bench-session", "note_kind": "inspection"}'::jsonb,
        true, 'bench-session-' || :client_id, 'inspection', NULL,
        '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
        'sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752',
        now(), 'bench', '0123456789abcdef'
    FROM head
    RETURNING position
), attempt AS (
    INSERT INTO bench_pgshape.sources_captureattempt (scope_id, source_type,
        source_id, outcome, reason, value_digest, principal, request_id, at)
    SELECT 'scp_pgbench', 'content', 'wn-pgbench-c' || :client_id || '-' || :k, 'accepted', NULL,
        '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
        'bench', '0123456789abcdef', now()
    FROM source
)
SELECT position, NULL FROM source
UNION ALL
SELECT position, value_digest FROM existing;
