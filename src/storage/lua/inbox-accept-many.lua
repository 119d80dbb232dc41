-- Accepts the score.changed events that reached the server within one turn of its event loop (one or more), in
-- one step: for each, in order, its duplicate mark, its line in the event log and its slug's mark in the inbox,
-- heat and lane, so a 2xx means all are in Redis and a failure means none is (an id twice in a
-- batch: the second is a duplicate). Only the first marked event tries the kick mark: within one call nothing can
-- clear it, so the others would find it set. All keys share the `{inbox}` tag, so a batch is one slot on a
-- cluster.
--
-- KEYS[1] the event log (list)
-- KEYS[2] the inbox (hash slug -> latest event id)
-- KEYS[3] the inbox's order (sorted set slug -> events)
-- KEYS[4] the kick mark (set while a fan-out is queued or running)
-- KEYS[5] when each marked slug's oldest event was accepted (sorted set slug -> ms)
-- KEYS[6] slugs marked while not hot (sorted set slug -> ms)
-- KEYS[7] each mark's lane (hash slug -> 'hot' or 'urgent'): decided here, once, by the slug's latest event
-- KEYS[8..n] per event, three keys: its duplicate mark, its slug's heat counter, its slug's was-hot mark
-- ARGV[1] seconds a duplicate mark lasts
-- ARGV[2] the event log's length
-- ARGV[3] how long the kick mark lasts (ms)
-- ARGV[4] the heat window (ms)
-- ARGV[5] now (ms), the acceptance time
-- ARGV[6] events in a heat window that make a slug hot
-- ARGV[7..] per event, three values: its event log line (JSON), its slug, its id
-- returns one outcome per event, in order: 'duplicate'; 'marked'; or 'marked_kick' for at most one event, when
-- no fan-out was queued (its caller queues one)

-- @include event-log

local log, inbox, order, kick, since, singles, lanes = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local window, now, hot = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])

-- Accepts one event; false when its id was seen before.
local function accept(seen, heat, was_hot, line, slug, id)
  if not log_event_once(seen, log, ARGV[1], line, ARGV[2]) then return false end
  redis.call('HSET', inbox, slug, id)
  redis.call('ZINCRBY', order, 1, slug)
  redis.call('ZADD', since, 'NX', now, slug)
  local count = redis.call('INCR', heat)
  if count == 1 then redis.call('PEXPIRE', heat, window) end
  local was = redis.call('EXISTS', was_hot) == 1
  -- Hot for two windows from here: a storm's last events that open a new window are still a storm's.
  if count == hot then redis.call('SET', was_hot, '1', 'PX', 2 * window) end
  -- The lane, decided here only: hot from the HOT_EVENTS-th event of a window until the was-hot mark lapses,
  -- else urgent (a single change). Single changes' marks are taken between a storm's takes, and so is the mark
  -- of the event that makes the slug hot: its fan-out moves the slug's pending update out of the single
  -- changes' lane before that update runs.
  if count < hot and not was then
    redis.call('HSET', lanes, slug, 'urgent')
    redis.call('ZADD', singles, now, slug)
  else
    redis.call('HSET', lanes, slug, 'hot')
    if not was then redis.call('ZADD', singles, now, slug) end
  end
  return true
end

local out = {}
local kick_tried = false
for e = 1, (#KEYS - 7) / 3 do
  -- The event's keys start after seven shared ones, its values after six.
  local k, a = 7 + 3 * (e - 1), 6 + 3 * (e - 1)
  local outcome = 'duplicate'
  if accept(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]) then
    outcome = 'marked'
    if not kick_tried then
      kick_tried = true
      if redis.call('SET', kick, '1', 'PX', ARGV[3], 'NX') then outcome = 'marked_kick' end
    end
  end
  out[e] = outcome
end
return out
