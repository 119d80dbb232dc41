-- Accepting one score.changed event, for inbox-accept (one event a call) and inbox-accept-many (a batch): its
-- duplicate mark, its line in the event log and its slug's mark in the inbox, heat and single-change lane.
-- The kick mark is left to the caller: a batch tries it once, for its first marked event.
--
-- Numbers may come as ARGV strings. `since`, `singles` and `was_hot` (and `now`, `hot_events`) may be nil: an
-- accept of before issue 30 passed no such keys.

local function inbox_accept_event(seen, log, inbox, order, heat, since, singles, was_hot,
                                  dedup_ttl, line, log_size, slug, id, window, now, hot_events)
  if not redis.call('SET', seen, '1', 'EX', dedup_ttl, 'NX') then return false end
  redis.call('LPUSH', log, line)
  redis.call('LTRIM', log, 0, tonumber(log_size) - 1)
  redis.call('HSET', inbox, slug, id)
  redis.call('ZINCRBY', order, 1, slug)
  if since then redis.call('ZADD', since, 'NX', now, slug) end
  local count = redis.call('INCR', heat)
  if count == 1 then redis.call('PEXPIRE', heat, window) end
  if was_hot then
    local hot = tonumber(hot_events)
    -- Hot for two windows from here: a storm's last events that open a new window are still a storm's.
    if count == hot then redis.call('SET', was_hot, '1', 'PX', 2 * tonumber(window)) end
    if count < hot and redis.call('EXISTS', was_hot) == 0 then
      redis.call('ZADD', singles, now, slug)
    end
  end
  return true
end
