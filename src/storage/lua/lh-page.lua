-- One page of a linear-hash map's buckets, for a scan that never reads the whole map at once.
--
-- KEYS[1] the map's stem
-- ARGV[1] first bucket
-- ARGV[2] how many buckets
-- returns {number of buckets now, {field, value, ...}}; the bucket numbered as many as there are stands for
--   `<stem>:big`

-- @include linear-hash

local M = lh_open(KEYS[1])
local total = lh_buckets(M)
local from, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for b = from, math.min(from + count - 1, total) do
  local key = M.stem .. ':' .. string.format('%d', b)
  if b == total then key = M.stem .. ':big' end
  local flat = redis.call('HGETALL', key)
  for i = 1, #flat do out[#out + 1] = flat[i] end
end
return { total, out }
