-- Reads fields of one linear-hash map.
--
-- KEYS[1] the map's stem
-- ARGV[1..] fields
-- returns their values in order, nil (a gap) where absent

-- @include linear-hash

local M = lh_open(KEYS[1])
local out = {}
for i, f in ipairs(ARGV) do out[i] = lh_get(M, f) end
return out
