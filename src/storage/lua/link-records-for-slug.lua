-- The records of one installation linked to a slug: the ids under the slug's digest whose own state has that
-- slug (two slugs may share a digest).
--
-- KEYS[1] slug index: slug digest -> record ids (linear-hash stem)
-- KEYS[2] record states (linear-hash stem)
-- ARGV[1] stored slug
-- ARGV[2] its digest
-- returns the record ids (a list, maybe empty)

-- @include linear-hash
-- @include record-state

local B, R = lh_open(KEYS[1]), lh_open(KEYS[2])
local v = lh_get(B, ARGV[2])
local out = {}
if not v then return out end
for id in string.gmatch(v, '%S+') do
  local state = lh_get(R, id)
  if state and slug_of(state) == ARGV[1] then out[#out + 1] = id end
end
return out
