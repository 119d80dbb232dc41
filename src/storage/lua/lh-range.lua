-- One page of a linear-hash map's fields by position (offset, count) in bucket order, without reading the
-- buckets before it: their sizes (HLEN) say where the page starts. The order is the buckets', stable between
-- writes; a split meanwhile moves fields to a later bucket.
--
-- KEYS[1] the map's stem
-- ARGV[1] offset (0-based)
-- ARGV[2] how many fields
-- returns {total fields, {field, value, ...}}

-- @include linear-hash

local M = lh_open(KEYS[1])
local buckets = lh_buckets(M)
local offset, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local total = M.n + redis.call('HLEN', M.stem .. ':big')
local out = {}
local seen = 0
for b = 0, buckets do
  if #out >= count * 2 then break end
  local key = M.stem .. ':' .. string.format('%d', b)
  if b == buckets then key = M.stem .. ':big' end
  local len = redis.call('HLEN', key)
  if seen + len > offset then
    local flat = redis.call('HGETALL', key)
    for i = 1, #flat, 2 do
      if seen >= offset and #out < count * 2 then
        out[#out + 1] = flat[i]
        out[#out + 1] = flat[i + 1]
      end
      seen = seen + 1
    end
  else
    seen = seen + len
  end
end
return { total, out }
