-- The event log's one writer: an inbound event's duplicate mark and, only when the mark was not there, its
-- line in the log, trimmed to its length. The line is built by event-log.ts (eventLogLine), its one format.

local function log_event_once(seen, log, ttl, line, size)
  if not redis.call('SET', seen, '1', 'EX', ttl, 'NX') then return false end
  redis.call('LPUSH', log, line)
  redis.call('LTRIM', log, 0, tonumber(size) - 1)
  return true
end
