-- An installation's number in the fan-out, given now if it had none (`i:<id>` -> number, `n:<number>` -> id,
-- `#` the last number given).
--
-- KEYS[1] the numbers hash
-- ARGV[1] the installation id
-- returns its number

local n = redis.call('HGET', KEYS[1], 'i:' .. ARGV[1])
if n then return tonumber(n) end
n = redis.call('HINCRBY', KEYS[1], '#', 1)
redis.call('HSET', KEYS[1], 'i:' .. ARGV[1], n, 'n:' .. n, ARGV[1])
return n
