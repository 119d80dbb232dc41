-- Review items (storage/review-codec.ts): a candidate is named in the item by a reference, a digest of its
-- slug (5 hex digits; on a clash with another slug, of the slug and a counter, longer after a few tries), under
-- which its report's details are kept once with a count of the items naming it. Needs linear-hash included
-- before it.

local function cand_ref(candKey, slug)
  for i = 0, 64 do
    local ref = string.sub(redis.sha1hex(i == 0 and slug or (slug .. '#' .. i)), 1, i < 8 and 5 or 12)
    local d = redis.call('HGET', candKey, ref)
    if not d or cjson.decode(d)[1] == slug then return ref end
  end
  error('no free review candidate reference for ' .. slug)
end

local function review_refs(stored)
  local out = {}
  local list = stored and string.match(stored, '^[^|]*|[^|]*|[^|]*|[^|]*|(.*)$')
  if not list then return out end
  for c in string.gmatch(list, '[^;]+') do out[#out + 1] = string.match(c, '^([^,]*)') end
  return out
end

-- Writes the record's item (`raw` as the codec wrote it, candidates named by stored slug; '' deletes it) and
-- keeps the candidates' details and counts right.
local function review_set(RV, candKey, id, raw, cands)
  local old = lh_get(RV, id)
  if raw ~= '' then
    local head, list = string.match(raw, '^([^|]*|[^|]*|[^|]*|[^|]*|)(.*)$')
    local details = cjson.decode(cands)
    local out = {}
    for c in string.gmatch(list, '[^;]+') do
      local slug, tail = string.match(c, '^([^,]*)(.*)$')
      local ref = cand_ref(candKey, slug)
      redis.call('HINCRBY', candKey, '#' .. ref, 1)
      if details[slug] then redis.call('HSET', candKey, ref, details[slug])
      else redis.call('HSETNX', candKey, ref, cjson.encode({ slug, slug, false, false, false })) end
      out[#out + 1] = ref .. tail
    end
    lh_set(RV, id, head .. table.concat(out, ';'))
  elseif old then
    lh_del(RV, id)
  end
  for _, ref in ipairs(review_refs(old)) do
    if redis.call('HINCRBY', candKey, '#' .. ref, -1) <= 0 then redis.call('HDEL', candKey, ref, '#' .. ref) end
  end
end
