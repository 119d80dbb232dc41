-- Accepts the score.changed events that reached the server within one turn of its event loop, in one call: each
-- event exactly as inbox-accept would, in order (an id twice in a batch: the second is a duplicate). Only the
-- first marked event tries the kick mark: within one call nothing can clear it, so the others would find it set.
-- All keys share the `{inbox}` tag, so a batch is one slot on a cluster.
--
-- KEYS[1] the event log (list)
-- KEYS[2] the inbox (hash slug -> latest event id)
-- KEYS[3] the inbox's order (sorted set slug -> events)
-- KEYS[4] the kick mark (set while a fan-out is queued or running)
-- KEYS[5] when each marked slug's oldest event was accepted (sorted set slug -> ms)
-- KEYS[6] slugs marked while not hot (sorted set slug -> ms)
-- KEYS[7..n] per event, three keys: its duplicate mark, its slug's heat counter, its slug's was-hot mark
-- ARGV[1] seconds a duplicate mark lasts
-- ARGV[2] the event log's length
-- ARGV[3] how long the kick mark lasts (ms)
-- ARGV[4] the heat window (ms)
-- ARGV[5] now (ms), the acceptance time
-- ARGV[6] events in a heat window that make a slug hot
-- ARGV[7..] per event, three values: its event log line (JSON), its slug, its id
-- returns one outcome per event, in order: 'duplicate'; 'marked'; or 'marked_kick' for at most one event, when
-- no fan-out was queued (its caller queues one)

-- @include inbox-accept

local out = {}
local kick_tried = false
local n = (#KEYS - 6) / 3
for e = 1, n do
  -- The event's keys and values both start after six shared ones.
  local k = 6 + 3 * (e - 1)
  local outcome = 'duplicate'
  if inbox_accept_event(KEYS[k + 1], KEYS[1], KEYS[2], KEYS[3], KEYS[k + 2], KEYS[5], KEYS[6], KEYS[k + 3],
                        ARGV[1], ARGV[k + 1], ARGV[2], ARGV[k + 2], ARGV[k + 3], ARGV[4], ARGV[5], ARGV[6]) then
    outcome = 'marked'
    if not kick_tried then
      kick_tried = true
      if redis.call('SET', KEYS[4], '1', 'PX', ARGV[3], 'NX') then outcome = 'marked_kick' end
    end
  end
  out[e] = outcome
end
return out
