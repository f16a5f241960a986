-- An approval queue file as objectstack-bridge 0.1 wrote it: schema
-- version 1 (`PRAGMA user_version = 1`, `PRAGMA application_id = 0x4F534151`,
-- WAL mode). Tests load it to check the upgrade to the current schema.
PRAGMA journal_mode = WAL;
PRAGMA application_id = 1330856273;
PRAGMA user_version = 1;
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
    finished_at     INTEGER
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
BEFORE UPDATE OF input, input_sha256, tool_name, action_name, object_name, proposer, created_at
ON pending_actions
WHEN NEW.input IS NOT OLD.input OR NEW.input_sha256 IS NOT OLD.input_sha256
  OR NEW.tool_name IS NOT OLD.tool_name OR NEW.action_name IS NOT OLD.action_name
  OR NEW.object_name IS NOT OLD.object_name OR NEW.proposer IS NOT OLD.proposer
  OR NEW.created_at IS NOT OLD.created_at
BEGIN
    SELECT RAISE(ABORT, 'what was proposed never changes');
END;
-- Three rows as objectstack-bridge 0.1 wrote them: pending, approved (not
-- yet executed), executed. None has an executable digest.
INSERT INTO pending_actions (id, dedup_key, tool_name, action_name, object_name, input, input_sha256,
    conversation_id, message_id, tool_call_id, trace_id, proposer, created_at, state, version,
    state_by, state_at, decided_by, decided_at, reason, approved_sha256, claimed_by, claimed_at,
    lease_until, result, error, finished_at)
VALUES
('pa_000000000000000000000001', 'bcab6fc02cfefc271298856798af64b54fe29f0f7634f0b7406d51aa6a8d12b9',
 'action_purge', 'purge', 'task', '{"recordId":"t1"}',
 '25a58e9f26f46dd72a31093547441f191cf974f34627dd072e6bc75bee52ed3b',
 'conv-1', 'msg-1', 'call-1', NULL, '{"id":"alice"}', 1714554060000, 'pending', 1,
 NULL, 1714554060000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
('pa_000000000000000000000002', '26cff4a76aea00014a6c3ade0c8c73782a4f3b1234b55d830016f10933741d73',
 'action_purge', 'purge', 'task', '{"recordId":"t2"}',
 '21f4e59c30cf748201670466e6935b0d0b3544df2e4c8787cf0e732e2d254567',
 'conv-1', 'msg-2', 'call-2', NULL, '{"id":"alice"}', 1714554120000, 'approved', 2,
 'operator', 1714554180000, 'operator', 1714554180000, NULL,
 '21f4e59c30cf748201670466e6935b0d0b3544df2e4c8787cf0e732e2d254567',
 NULL, NULL, NULL, NULL, NULL, NULL),
('pa_000000000000000000000003', 'b3ae9f3c5d1a638ef5f53df9668fb81b099f5cbbdc00c5c39d58fda70e32fbc9',
 'action_purge', 'purge', 'task', '{"recordId":"t3"}',
 '78a4c51fa24e4877ddcd976e7da9c4765289cc753263748c4d11d7d72ab7be26',
 'conv-1', 'msg-3', 'call-3', NULL, '{"id":"alice"}', 1714554240000, 'executed', 4,
 'pid-1', 1714554400000, 'operator', 1714554300000, NULL,
 '78a4c51fa24e4877ddcd976e7da9c4765289cc753263748c4d11d7d72ab7be26',
 'pid-1', 1714554360000, 1714554660000, '{"ok":true,"action":"purge"}', NULL, 1714554400000);
