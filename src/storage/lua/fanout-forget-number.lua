-- Deletes a removed installation's number in the fan-out (both directions). `#` keeps counting, so the number
-- is never given again and a shard entry a late batch left with it names nobody.
--
-- KEYS[1] the numbers hash
-- ARGV[1] the installation id
-- returns 'forgotten', or 'unknown' when it had no number

local n = redis.call('HGET', KEYS[1], 'i:' .. ARGV[1])
if not n then return 'unknown' end
redis.call('HDEL', KEYS[1], 'i:' .. ARGV[1], 'n:' .. n)
return 'forgotten'
