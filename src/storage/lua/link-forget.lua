-- Forgets records of one installation (deleted or merged away in the CRM): their states and review items. The
-- slug each was linked to is named in the reply for link-unindex.lua to take the record out of (the slug index
-- is keyed by digests only TypeScript computes). Removing only what is there, it writes nothing for an
-- installation already removed.
--
-- KEYS[1] record states (linear-hash stem)
-- KEYS[2] review items (linear-hash stem)
-- KEYS[3] review candidates' details (hash)
-- KEYS[4] status counts (hash; lib/status-counts.lua)
-- KEYS[5] stem prefix of the per-status record maps (`<prefix>:<status code>`)
-- ARGV[1..] record ids
-- returns {'forgotten', id, stored slug left, ...} for each record that was linked

-- @include linear-hash
-- @include record-state
-- @include review-items
-- @include status-counts

local R, RV = lh_open(KEYS[1]), lh_open(KEYS[2])
local C = sc_open(KEYS[5])
local reply = { 'forgotten' }
for _, id in ipairs(ARGV) do
  local old = lh_get(R, id)
  if old then
    local slug = slug_of(old)
    if slug ~= '' then
      reply[#reply + 1] = id
      reply[#reply + 1] = slug
    end
    lh_del(R, id)
    sc_move(C, KEYS[4], id, old, nil)
  end
  review_set(RV, KEYS[3], id, '', '')
end
lh_close(R)
lh_close(RV)
sc_close(C)
return reply
