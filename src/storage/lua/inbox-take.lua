-- Takes up to a number of marks, fewest events first (or only single changes'), into `draining`;
-- when none is left the kick mark goes in the same step, so the next accepted event queues a fan-out again.
--
-- KEYS[1] the inbox (hash slug -> latest event id)
-- KEYS[2] the inbox's order (sorted set slug -> events)
-- KEYS[3] draining (hash slug -> event id)
-- KEYS[4] the kick mark
-- KEYS[5] when each mark's oldest event was accepted (sorted set slug -> ms)
-- KEYS[6] the same for draining marks (hash slug -> ms)
-- KEYS[7] slugs marked while not hot (sorted set slug -> ms; absent before)
-- KEYS[8] each mark's lane (hash slug -> lane; absent before)
-- KEYS[9] the same for draining marks (hash slug -> lane; absent before)
-- ARGV[1] how many marks at most
-- ARGV[2] 'singles': only the marks of slugs in KEYS[7], oldest first; such a take leaves the kick mark
--         alone, as other marks may be left (absent or '': any marks, fewest events first)
-- ARGV[3] how long the kick mark lasts (ms; absent before): a take of any marks sets it again, so a fan-out
--         that runs longer than the mark's lifetime keeps it, and the next event does not queue a second one
-- returns {slug, event id, event count, accepted at (ms, or '' when not known), lane ('' when not known), ...}

local slugs
if ARGV[2] == 'singles' then
  slugs = redis.call('ZRANGE', KEYS[7], 0, tonumber(ARGV[1]) - 1)
  if #slugs > 0 then redis.call('ZREM', KEYS[7], unpack(slugs)) end
else
  slugs = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1)
  if #slugs == 0 then
    redis.call('DEL', KEYS[4])
    if KEYS[7] then redis.call('DEL', KEYS[7]) end
    return {}
  end
  if KEYS[7] then redis.call('ZREM', KEYS[7], unpack(slugs)) end
  if ARGV[3] then redis.call('SET', KEYS[4], '1', 'PX', ARGV[3]) end
end
local out = {}
for _, slug in ipairs(slugs) do
  local id = redis.call('HGET', KEYS[1], slug)
  local count = redis.call('ZSCORE', KEYS[2], slug)
  local since = redis.call('ZSCORE', KEYS[5], slug)
  local lane = KEYS[8] and redis.call('HGET', KEYS[8], slug)
  redis.call('HDEL', KEYS[1], slug)
  redis.call('ZREM', KEYS[2], slug)
  redis.call('ZREM', KEYS[5], slug)
  if KEYS[8] then redis.call('HDEL', KEYS[8], slug) end
  if id then
    redis.call('HSET', KEYS[3], slug, id)
    -- A mark taken again while its earlier take drains keeps the earlier, older time, and takes the newer lane.
    if since then redis.call('HSETNX', KEYS[6], slug, since) end
    if KEYS[9] then
      if lane then redis.call('HSET', KEYS[9], slug, lane) else redis.call('HDEL', KEYS[9], slug) end
    end
    table.insert(out, slug)
    table.insert(out, id)
    table.insert(out, count)
    table.insert(out, since or '')
    table.insert(out, lane or '')
  end
end
return out
