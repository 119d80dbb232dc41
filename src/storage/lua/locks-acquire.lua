-- Takes a set of locks all at once or none of them (record locks of one installation share its hash tag).
--
-- KEYS[1..n] the locks
-- ARGV[1] the holder's token
-- ARGV[2] how long they last (ms)
-- returns 'acquired', or 'busy' when any is held

for _, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then return 'busy' end
end
for _, k in ipairs(KEYS) do
  redis.call('SET', k, ARGV[1], 'PX', ARGV[2])
end
return 'acquired'
