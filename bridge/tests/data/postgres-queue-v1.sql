-- A PostgreSQL approval queue at schema version 1, as objectstack-bridge
-- 0.1 creates it (a frozen copy of migration 1: never edit it). The
-- upgrade test loads it into an empty schema and adds rows.
CREATE TABLE objectstack_approvals_schema (
    version    integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now(),
    applied_by text NOT NULL
);
CREATE TABLE pending_actions (
    id                text PRIMARY KEY,
    dedup_key         text UNIQUE,
    tool_name         text NOT NULL,
    action_name       text NOT NULL,
    object_name       text,
    input             json NOT NULL,
    input_sha256      text NOT NULL,
    executable_sha256 text,
    conversation_id   text,
    message_id        text,
    tool_call_id      text,
    trace_id          text,
    proposer          json NOT NULL,
    created_at        bigint NOT NULL,
    state             text NOT NULL CHECK (state IN ('pending', 'approved', 'rejected',
                          'expired', 'cancelled', 'executing', 'executed', 'failed', 'in_doubt')),
    version           bigint NOT NULL,
    state_by          text,
    state_at          bigint NOT NULL,
    decided_by        text,
    decided_at        bigint,
    reason            text,
    approved_sha256   text,
    claimed_by        text,
    claimed_at        bigint,
    lease_until       bigint,
    result            json,
    error             text,
    finished_at       bigint
);
CREATE INDEX pending_actions_by_state ON pending_actions (state, created_at, id);
CREATE INDEX pending_actions_claimable ON pending_actions (created_at, id)
    WHERE state = 'approved';

CREATE FUNCTION pending_actions_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.state IN ('rejected', 'expired', 'cancelled', 'executed', 'failed') THEN
        RAISE EXCEPTION 'a pending action in a terminal state never changes (% is %)',
            OLD.id, OLD.state;
    END IF;
    IF NEW.state IS DISTINCT FROM OLD.state AND NOT (
           (OLD.state = 'pending' AND NEW.state IN ('approved', 'rejected', 'expired', 'cancelled'))
        OR (OLD.state = 'approved' AND NEW.state = 'executing')
        OR (OLD.state = 'executing' AND NEW.state IN ('executed', 'failed', 'in_doubt'))
        OR (OLD.state = 'in_doubt' AND NEW.state IN ('executed', 'failed'))
    ) THEN
        RAISE EXCEPTION 'not a transition of the approval state machine: % -> %',
            OLD.state, NEW.state;
    END IF;
    IF NEW.id IS DISTINCT FROM OLD.id
        OR NEW.input::text IS DISTINCT FROM OLD.input::text
        OR NEW.input_sha256 IS DISTINCT FROM OLD.input_sha256
        OR NEW.executable_sha256 IS DISTINCT FROM OLD.executable_sha256
        OR NEW.dedup_key IS DISTINCT FROM OLD.dedup_key
        OR NEW.tool_name IS DISTINCT FROM OLD.tool_name
        OR NEW.action_name IS DISTINCT FROM OLD.action_name
        OR NEW.object_name IS DISTINCT FROM OLD.object_name
        OR NEW.proposer::text IS DISTINCT FROM OLD.proposer::text
        OR NEW.created_at IS DISTINCT FROM OLD.created_at
    THEN
        RAISE EXCEPTION 'what was proposed never changes';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER pending_actions_guard BEFORE UPDATE ON pending_actions
    FOR EACH ROW EXECUTE FUNCTION pending_actions_guard();

CREATE FUNCTION pending_actions_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('objectstack_approvals', NEW.id);
    RETURN NULL;
END
$$;
CREATE TRIGGER pending_actions_approved AFTER INSERT OR UPDATE OF state ON pending_actions
    FOR EACH ROW WHEN (NEW.state = 'approved') EXECUTE FUNCTION pending_actions_announce();
INSERT INTO objectstack_approvals_schema (version, applied_by)
    VALUES (1, 'objectstack-bridge 0.1.0');
