-- Forgets records of one installation (deleted or merged away in the CRM): their states, their places in the
-- slug index and their review items. As in link-apply.lua, leaving a slug needs its digest: a record whose
-- stored slug is not the known one is left untouched and listed in the reply. Removing nothing that is not
-- there, it writes nothing for an installation already removed.
--
-- KEYS[1] record states (linear-hash stem)
-- KEYS[2] slug index: slug digest -> record ids (linear-hash stem)
-- KEYS[3] review items (linear-hash stem)
-- KEYS[4] review candidates' details (hash)
-- ARGV[1..] three per record: id, known stored slug, its digest
-- returns {'forgotten', id, stored slug, ...} listing the records left untouched

-- @include linear-hash
-- @include member-lists
-- @include record-state
-- @include review-items

local R, B, RV = lh_open(KEYS[1]), lh_open(KEYS[2]), lh_open(KEYS[3])
local reply = { 'forgotten' }
for i = 1, #ARGV, 3 do
  local id, known, knownDigest = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local old = lh_get(R, id)
  local slug = old and slug_of(old) or ''
  if slug ~= '' and slug ~= known then
    reply[#reply + 1] = id
    reply[#reply + 1] = slug
  else
    if slug ~= '' then list_remove(B, knownDigest, id) end
    if old then lh_del(R, id) end
    review_set(RV, KEYS[4], id, '', '')
  end
end
lh_close(R)
lh_close(B)
lh_close(RV)
return reply
