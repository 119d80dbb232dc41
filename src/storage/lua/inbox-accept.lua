-- Accepts a score.changed event in one step: its duplicate mark, its line in the event log and its slug's mark
-- in the inbox, so a 2xx means all are in Redis and a failure means none is. All keys share the `{inbox}` tag.
--
-- KEYS[1] the event's duplicate mark
-- KEYS[2] the event log (list)
-- KEYS[3] the inbox (hash slug -> latest event id)
-- KEYS[4] the inbox's order (sorted set slug -> events)
-- KEYS[5] the kick mark (set while a fan-out is queued or running)
-- KEYS[6] the slug's heat counter
-- KEYS[7] when each marked slug's oldest event was accepted (sorted set slug -> ms; absent before issue 30)
-- KEYS[8] slugs marked while not hot (sorted set slug -> ms; absent before)
-- KEYS[9] the slug's was-hot mark (absent before)
-- ARGV[1] seconds a duplicate mark lasts
-- ARGV[2] the event log line (JSON)
-- ARGV[3] the event log's length
-- ARGV[4] the slug
-- ARGV[5] the event id
-- ARGV[6] how long the kick mark lasts (ms)
-- ARGV[7] the heat window (ms)
-- ARGV[8] now (ms), the acceptance time (absent before issue 30)
-- ARGV[9] events in a heat window that make a slug hot (absent before)
-- returns 'duplicate'; 'marked'; or 'marked_kick' when no fan-out was queued (the caller queues one)

-- @include inbox-accept

if not inbox_accept_event(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6], KEYS[7], KEYS[8], KEYS[9],
                          ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[7], ARGV[8], ARGV[9]) then
  return 'duplicate'
end
if redis.call('SET', KEYS[5], '1', 'PX', ARGV[6], 'NX') then return 'marked_kick' end
return 'marked'
