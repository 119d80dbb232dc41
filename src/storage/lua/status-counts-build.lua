-- One step of the one-time build of an installation's status counts (lib/status-counts.lua) for states written
-- before they were kept: counts the records of some buckets of the record states not counted yet, or notes the
-- slug digests of some buckets of the slug index that list two records or more. Idempotent, and safe beside
-- writes (they count a record themselves, and this counts only what is not); the caller walks the buckets up
-- to the number the reply gives (it grows by splits meanwhile: a split moves records to a higher bucket, never
-- a lower one), then marks the build done.
--
-- KEYS[1] the installation's hash (exists while the installation does)
-- KEYS[2] record states (linear-hash stem)
-- KEYS[3] status counts (hash)
-- KEYS[4] stem prefix of the per-status record maps
-- KEYS[5] slug index: slug digest -> record ids (linear-hash stem)
-- KEYS[6] slug digests listing two records or more (set)
-- ARGV[1] 'states' (count records), 'slugs' (note shared slugs) or 'done' (mark the build done)
-- ARGV[2] first bucket
-- ARGV[3] how many buckets
-- returns 'gone' when the installation is gone; the number of buckets of the map walked (the one numbered as
--   many stands for `<stem>:big`); 'done' after marking

-- @include linear-hash
-- @include record-state
-- @include status-counts

if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
local what, from, count = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if what == 'done' then
  redis.call('HSET', KEYS[3], 'built', '1')
  return 'done'
end
local M = lh_open(what == 'states' and KEYS[2] or KEYS[5])
local total = lh_buckets(M)
local C = sc_open(KEYS[4])
for b = from, math.min(from + count - 1, total) do
  local key = M.stem .. ':' .. string.format('%d', b)
  if b == total then key = M.stem .. ':big' end
  local flat = redis.call('HGETALL', key)
  for i = 1, #flat, 2 do
    if what == 'states' then
      sc_add_uncounted(C, KEYS[3], flat[i], flat[i + 1])
    elseif string.find(flat[i + 1], ' ', 1, true) then
      redis.call('SADD', KEYS[6], flat[i])
    end
  end
end
sc_close(C)
return tostring(total)
