//! The PostgreSQL queue's schema, as numbered migrations.
//!
//! `objectstack_approvals_schema` holds one row per migration applied
//! (version, when, by which library). A write open applies the missing
//! migrations in one transaction under an advisory lock, so gateways that
//! start together migrate once; a database whose newest version is above
//! [`CURRENT`] is refused, and so is a `pending_actions` table this library
//! did not create. A migration, once released, never changes: the next
//! change is a new one.
//!
//! The guards mirror the SQLite file's triggers: a terminal row never
//! changes, a state change must be a transition of the state machine, and
//! what was proposed (input, its hash, the executable digest, the dedup
//! key, tool, action, object, proposer, creation time) never changes,
//! whatever client issues the `UPDATE`.

/// The schema version this build writes and reads.
pub(super) const CURRENT: i32 = 2;

/// The key of the advisory lock migrations hold ("OSAQ" and 1).
pub(super) const MIGRATION_LOCK: i64 = 0x4F53_4151_0000_0001;

/// The channel approvals are announced on (`NOTIFY`, payload: the id).
pub(super) const CHANNEL: &str = "objectstack_approvals";

/// Indexes that change no reader, so they come without a version: every
/// write open adds the missing ones, and an older build ignores them. They
/// let a listing in an order stop after its limit instead of sorting every
/// row: a history (most recently changed first), the newest rows first,
/// and one proposer's newest (the model's lookup).
pub(super) const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS pending_actions_by_change ON pending_actions (state_at, id);
CREATE INDEX IF NOT EXISTS pending_actions_by_creation ON pending_actions (created_at, id);
CREATE INDEX IF NOT EXISTS pending_actions_by_proposer
    ON pending_actions ((proposer ->> 'id'), created_at, id);
";

/// Whether every index of [`INDEXES`] is there (on the search path, as the
/// table is found).
pub(super) const INDEXES_PRESENT: &str = "SELECT to_regclass('pending_actions_by_change') IS NOT NULL \
    AND to_regclass('pending_actions_by_creation') IS NOT NULL \
    AND to_regclass('pending_actions_by_proposer') IS NOT NULL";

/// Migration `n` is `MIGRATIONS[n - 1]`.
pub(super) const MIGRATIONS: &[&str] = &[V1, V2];

/// # Versions
///
/// - 1: the table, its indexes, the guards and the approval notification.
/// - 2: approve with edits and deadlines: `approved_input` (set only by
///   the `pending -> approved` transition) and `expires_at` (part of what
///   was proposed, never changed).
///
/// Version 1: as above.
const V1: &str = r#"
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
"#;

/// Version 2: the two columns, and the guard extended to them.
const V2: &str = r#"
ALTER TABLE pending_actions ADD COLUMN approved_input json;
ALTER TABLE pending_actions ADD COLUMN expires_at bigint;

CREATE OR REPLACE FUNCTION pending_actions_guard() RETURNS trigger LANGUAGE plpgsql AS $$
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
        OR NEW.expires_at IS DISTINCT FROM OLD.expires_at
    THEN
        RAISE EXCEPTION 'what was proposed never changes';
    END IF;
    IF NEW.approved_input::text IS DISTINCT FROM OLD.approved_input::text
        AND NOT (OLD.state = 'pending' AND NEW.state = 'approved')
    THEN
        RAISE EXCEPTION 'the approved input is set by the approval and never changes';
    END IF;
    RETURN NEW;
END
$$;
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_has_its_migration_and_the_channel_is_the_one_announced() {
        assert_eq!(usize::try_from(CURRENT).ok(), Some(MIGRATIONS.len()));
        assert!(V1.contains(&format!("pg_notify('{CHANNEL}'")));
    }
}
