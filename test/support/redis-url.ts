/**
 * The Redis that tests and benches use: `REDIS_URL` when set (CI, another port), else the local default.
 * Every test still keeps to its own key prefix or queue names, since this Redis is shared.
 */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
