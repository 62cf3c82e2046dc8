-- Scratch copies of the registry tables for bench/pgbench.py, in their own schema
-- of the bench database (the service's tables are never touched). Each copy is
-- "LIKE public.<table> INCLUDING ALL" - same columns, defaults, identity, CHECK
-- and unique constraints, indexes (partial ones too) - plus the same foreign keys
-- (Django makes them DEFERRABLE INITIALLY DEFERRED), pointing at the copies. The
-- immutability triggers are BEFORE UPDATE OR DELETE, never fired by a capture,
-- so they are not copied. Run after `manage.py migrate`.
DROP SCHEMA IF EXISTS bench_pgshape CASCADE;
CREATE SCHEMA bench_pgshape;

DO $$
DECLARE
    copied text[] := ARRAY['sources_scope', 'sources_sourcejournalhead',
                           'sources_contentsource', 'sources_captureattempt'];
    name text;
    fk record;
BEGIN
    FOREACH name IN ARRAY copied LOOP
        EXECUTE format('CREATE TABLE bench_pgshape.%I (LIKE public.%I INCLUDING ALL)',
                       name, name);
    END LOOP;
    FOREACH name IN ARRAY copied LOOP
        FOR fk IN
            SELECT c.conname, pg_get_constraintdef(c.oid) AS definition
            FROM pg_constraint c
            WHERE c.conrelid = format('public.%I', name)::regclass
              AND c.contype = 'f'
              AND c.confrelid::regclass::text = ANY (copied)
        LOOP
            -- The definition names the referenced table unqualified; qualify it.
            EXECUTE format('ALTER TABLE bench_pgshape.%I ADD CONSTRAINT %I %s', name,
                fk.conname,
                regexp_replace(fk.definition, 'REFERENCES ', 'REFERENCES bench_pgshape.'));
        END LOOP;
    END LOOP;
END
$$;

INSERT INTO bench_pgshape.sources_scope (scope_id, title, summary, parent_scope_id,
    version, idempotency_key, request_digest, created_by, created_at, request_id)
VALUES ('scp_pgbench', 'pgbench', 'pgbench', NULL, 1, 'pgbench',
    repeat('0', 64), 'bench', now(), '0123456789abcdef');
INSERT INTO bench_pgshape.sources_sourcejournalhead (scope_id, last_position)
VALUES ('scp_pgbench', 0);
