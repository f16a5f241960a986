-- An approval queue file as objectstack-bridge wrote it at schema version 2
-- (`PRAGMA user_version = 2`, rollback journal): an executable digest, no
-- approved input, no deadline. Tests load it to check the upgrade to the
-- current schema.
PRAGMA application_id = 1330856273;
PRAGMA user_version = 2;
CREATE TABLE pending_actions (
    id              TEXT PRIMARY KEY NOT NULL,
    dedup_key       TEXT UNIQUE,
    tool_name       TEXT NOT NULL,
    action_name     TEXT NOT NULL,
    object_name     TEXT,
    input           TEXT NOT NULL,
    input_sha256    TEXT NOT NULL,
    conversation_id TEXT,
    message_id      TEXT,
    tool_call_id    TEXT,
    trace_id        TEXT,
    proposer        TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired',
                        'cancelled', 'executing', 'executed', 'failed', 'in_doubt')),
    version         INTEGER NOT NULL,
    state_by        TEXT,
    state_at        INTEGER NOT NULL,
    decided_by      TEXT,
    decided_at      INTEGER,
    reason          TEXT,
    approved_sha256 TEXT,
    claimed_by      TEXT,
    claimed_at      INTEGER,
    lease_until     INTEGER,
    result          TEXT,
    error           TEXT,
    finished_at     INTEGER,
    executable_sha256 TEXT
);
CREATE INDEX pending_actions_by_state ON pending_actions (state, created_at, id);
CREATE TRIGGER pending_actions_terminal_is_final
BEFORE UPDATE ON pending_actions
WHEN OLD.state IN ('rejected', 'expired', 'cancelled', 'executed', 'failed')
BEGIN
    SELECT RAISE(ABORT, 'a pending action in a terminal state never changes');
END;
CREATE TRIGGER pending_actions_transitions
BEFORE UPDATE OF state ON pending_actions
WHEN NOT (
       (OLD.state = 'pending' AND NEW.state IN ('approved', 'rejected', 'expired', 'cancelled'))
    OR (OLD.state = 'approved' AND NEW.state = 'executing')
    OR (OLD.state = 'executing' AND NEW.state IN ('executed', 'failed', 'in_doubt'))
    OR (OLD.state = 'in_doubt' AND NEW.state IN ('in_doubt', 'executed', 'failed'))
)
BEGIN
    SELECT RAISE(ABORT, 'not a transition of the approval state machine');
END;
CREATE TRIGGER pending_actions_input_is_immutable
BEFORE UPDATE OF input, input_sha256, executable_sha256, dedup_key, tool_name, action_name,
    object_name, proposer, created_at
ON pending_actions
WHEN NEW.input IS NOT OLD.input OR NEW.input_sha256 IS NOT OLD.input_sha256
  OR NEW.executable_sha256 IS NOT OLD.executable_sha256 OR NEW.dedup_key IS NOT OLD.dedup_key
  OR NEW.tool_name IS NOT OLD.tool_name OR NEW.action_name IS NOT OLD.action_name
  OR NEW.object_name IS NOT OLD.object_name OR NEW.proposer IS NOT OLD.proposer
  OR NEW.created_at IS NOT OLD.created_at
BEGIN
    SELECT RAISE(ABORT, 'what was proposed never changes');
END;
-- Two rows: pending (proposed at 1700000000000 ms), approved as proposed.
INSERT INTO pending_actions (id, dedup_key, tool_name, action_name, object_name, input, input_sha256,
    conversation_id, message_id, tool_call_id, trace_id, proposer, created_at, state, version,
    state_by, state_at, executable_sha256)
VALUES ('pa_200000000000000000000001', NULL, 'action_wipe', 'wipe', 'task', '{"recordId":"t1"}', '25a58e9f26f46dd72a31093547441f191cf974f34627dd072e6bc75bee52ed3b',
    'conv', NULL, NULL, NULL, '{"id":"u1"}', 1700000000000, 'pending', 1, NULL, 1700000000000,
    'abababababababababababababababababababababababababababababababab');
INSERT INTO pending_actions (id, dedup_key, tool_name, action_name, object_name, input, input_sha256,
    conversation_id, message_id, tool_call_id, trace_id, proposer, created_at, state, version,
    state_by, state_at, decided_by, decided_at, approved_sha256, executable_sha256)
VALUES ('pa_200000000000000000000002', NULL, 'action_wipe', 'wipe', 'task', '{"recordId":"t1"}', '25a58e9f26f46dd72a31093547441f191cf974f34627dd072e6bc75bee52ed3b',
    'conv', NULL, NULL, NULL, '{"id":"u1"}', 1700000000000, 'approved', 2, 'op', 1700000001000,
    'op', 1700000001000, '25a58e9f26f46dd72a31093547441f191cf974f34627dd072e6bc75bee52ed3b', 'abababababababababababababababababababababababababababababababab');
