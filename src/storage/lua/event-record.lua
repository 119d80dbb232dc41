-- Records an inbound event once: its duplicate mark and its line in the event log in one step.
--
-- KEYS[1] the event's duplicate mark
-- KEYS[2] the event log (list)
-- ARGV[1] seconds the mark lasts
-- ARGV[2] the log line (JSON)
-- ARGV[3] the log's length
-- returns 'recorded', or 'duplicate' when the mark was there

if not redis.call('SET', KEYS[1], '1', 'EX', ARGV[1], 'NX') then return 'duplicate' end
redis.call('LPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
return 'recorded'
