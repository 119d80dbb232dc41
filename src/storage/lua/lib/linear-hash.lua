-- Linear hash (storage/linear-hash.ts explains the layout): a map of many small fields kept as a meta hash at
-- the map's stem (`k` level, `p` split pointer, `n` fields in buckets), buckets `<stem>:<b>` small enough for
-- Redis's listpack encoding, and `<stem>:big` for a field or value too long for one. Bucket keys are built
-- here from the stem and carry its hash tag, so on a Redis Cluster they lie in the stem's slot.

-- Average fields per bucket before a split: the unsplit buckets hold up to twice that, well under 128.
local LH_LOAD = 40
-- The longest field or value kept in a bucket (Redis's default `hash-max-listpack-value`).
local LH_INLINE = 64

local function lh_open(stem)
  local m = redis.call('HMGET', stem, 'k', 'p', 'n')
  return { stem = stem, k = tonumber(m[1]) or 0, p = tonumber(m[2]) or 0, n = tonumber(m[3]) or 0, dirty = false }
end

local function lh_h(field)
  return tonumber(string.sub(redis.sha1hex(field), 1, 8), 16)
end

local function lh_bucket(M, field)
  local h = lh_h(field)
  local size = 2 ^ M.k
  local b = h % size
  if b < M.p then b = h % (size * 2) end
  return M.stem .. ':' .. string.format('%d', b)
end

local function lh_get(M, field)
  local v = redis.call('HGET', lh_bucket(M, field), field)
  if not v then v = redis.call('HGET', M.stem .. ':big', field) end
  return v
end

local function lh_split(M)
  local size = 2 ^ M.k
  local from = M.stem .. ':' .. string.format('%d', M.p)
  local to = M.stem .. ':' .. string.format('%d', M.p + size)
  local flat = redis.call('HGETALL', from)
  local moved, names = {}, {}
  for i = 1, #flat, 2 do
    if lh_h(flat[i]) % (size * 2) ~= M.p then
      moved[#moved + 1] = flat[i]
      moved[#moved + 1] = flat[i + 1]
      names[#names + 1] = flat[i]
    end
  end
  if #names > 0 then
    redis.call('HSET', to, unpack(moved))
    redis.call('HDEL', from, unpack(names))
  end
  M.p = M.p + 1
  if M.p == size then
    M.k = M.k + 1
    M.p = 0
  end
  M.dirty = true
end

local function lh_set(M, field, value)
  local bucket = lh_bucket(M, field)
  if #field > LH_INLINE or #value > LH_INLINE then
    redis.call('HSET', M.stem .. ':big', field, value)
    if redis.call('HDEL', bucket, field) == 1 then
      M.n = M.n - 1
      M.dirty = true
    end
    return
  end
  if redis.call('HSET', bucket, field, value) == 1 then
    M.n = M.n + 1
    M.dirty = true
    redis.call('HDEL', M.stem .. ':big', field)
    if M.n > LH_LOAD * (2 ^ M.k + M.p) then lh_split(M) end
  end
end

local function lh_del(M, field)
  if redis.call('HDEL', lh_bucket(M, field), field) == 1 then
    M.n = M.n - 1
    M.dirty = true
  else
    redis.call('HDEL', M.stem .. ':big', field)
  end
end

local function lh_close(M)
  if M.dirty then redis.call('HSET', M.stem, 'k', M.k, 'p', M.p, 'n', M.n) end
end

local function lh_buckets(M)
  return 2 ^ M.k + M.p
end
