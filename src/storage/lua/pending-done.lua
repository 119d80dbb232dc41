-- Clears taken marks: each slug only while it still holds the mark that was taken, and with it the time its
-- oldest change arrived (a slug marked again meanwhile keeps that time: its new change is not written yet).
--
-- KEYS[1] the lane's marks (sorted set slug -> mark)
-- KEYS[2] when each marked slug's oldest change arrived (sorted set; absent on marks of older releases)
-- KEYS[3] the other lane's marks (absent on marks of older releases): a slug still marked there keeps its time
-- ARGV[1..] slug / mark pairs
-- returns how many marks were cleared

local removed = 0
for i = 1, #ARGV, 2 do
  local current = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if current and tonumber(current) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    removed = removed + 1
    if KEYS[2] and not (KEYS[3] and redis.call('ZSCORE', KEYS[3], ARGV[i])) then
      redis.call('ZREM', KEYS[2], ARGV[i])
    end
  end
end
return removed
