-- Pauses a rate gate for at least this long (a longer pause already set stays).
--
-- KEYS[1] the pause
-- ARGV[1] ms
-- returns 'paused'

local current = redis.call('PTTL', KEYS[1])
if current < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 'paused'
