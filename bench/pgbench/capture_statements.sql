-- One new working-note capture as three statements in one transaction: lock the
-- scope's journal head and take the next position, insert the Source, log the
-- accepted attempt. All clients share one scope, as the HTTP runs do. Digests
-- are constants: the service computes them in Python, not in SQL.
-- Source ids are wn-pgbench-c<client>-<n>, n counting per client (pgbench -D k=0),
-- like the wrk workloads' per-thread counters.
\set k :k + 1
BEGIN;
UPDATE bench_pgshape.sources_sourcejournalhead SET last_position = last_position + 1
    WHERE scope_id = 'scp_pgbench' RETURNING last_position AS pos \gset
INSERT INTO bench_pgshape.sources_contentsource (scope_id, source_type, source_id,
    position, content, metadata, is_working_note, session_id, note_kind, expires_at,
    value_digest, content_digest, created_at, created_by, request_id)
VALUES ('scp_pgbench', 'content', 'wn-pgbench-c' || :client_id || '-' || :k, :pos,
    '"Inspected wn-pgbench: the tokenizer keeps state between calls, so a second parse of the same buffer starts mid-token. Checked the reset path; it is only reached on error."',
    '{"kind": "working_note", "session_id": "bench-session", "note_kind": "inspection"}',
    true, 'bench-session-' || :client_id, 'inspection', NULL,
    '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    'sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752',
    now(), 'bench', '0123456789abcdef');
INSERT INTO bench_pgshape.sources_captureattempt (scope_id, source_type, source_id,
    outcome, reason, value_digest, principal, request_id, at)
VALUES ('scp_pgbench', 'content', 'wn-pgbench-c' || :client_id || '-' || :k, 'accepted', NULL,
    '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    'bench', '0123456789abcdef', now());
END;
