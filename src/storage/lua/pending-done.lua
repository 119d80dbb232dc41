-- Clears taken marks: each slug only while it still holds the mark that was taken.
--
-- KEYS[1] the lane's marks (sorted set slug -> mark)
-- ARGV[1..] slug / mark pairs
-- returns how many marks were cleared

local removed = 0
for i = 1, #ARGV, 2 do
  local current = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if current and tonumber(current) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    removed = removed + 1
  end
end
return removed
