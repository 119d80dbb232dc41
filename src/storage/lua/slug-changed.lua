-- Keeps the report sequence number of a slug's latest change event: a smaller one (an older event arriving
-- late) leaves it.
--
-- KEYS[1] the slug changes (hash slug -> sequence number)
-- ARGV[1] the slug
-- ARGV[2] the sequence number
-- returns 'set', or 'older'

local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > current then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 'set'
end
return 'older'
