-- A record's packed state `seq|slug|status|score|auto|fingerprint|unlinked name` (storage/record-state.ts
-- writes and reads the whole of it; the scripts only need its parts by place).

local function seq_of(v) return string.match(v, '^([^|]*)') end
local function slug_of(v) return string.match(v, '^[^|]*|([^|]*)') or '' end
local function rest_of(v) return string.match(v, '^[^|]*|(.*)$') or '' end

local function parts(v)
  local t = {}
  for s in string.gmatch(v .. '|', '([^|]*)|') do t[#t + 1] = s end
  return t
end

local function join(t)
  local n = #t
  while n > 1 and t[n] == '' do n = n - 1 end
  return table.concat(t, '|', 1, n)
end
