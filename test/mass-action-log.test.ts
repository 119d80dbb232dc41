import { describe, expect, it } from 'vitest';
import {
  MASS_RECORDS_PER_VALUE,
  type MassAction,
  MassActionLog,
  newMassId,
} from '../src/decisions/mass-actions.js';
import { Keys } from '../src/storage/keys.js';
import { redisUnderOwnPrefix } from './support/redis-prefixes.js';

/**
 * The mass action log on the real Redis under a prefix of its own. A large action's records are kept apart
 * from its summary: the admin's links page and the API list recent actions without reading every record of
 * each (an undo of 100,000 records was one 15 MB value, read and parsed by each listing).
 */

const { prefix, redis } = redisUnderOwnPrefix();
const keys = new Keys(prefix);
const log = new MassActionLog(redis, keys);

function action(records: number): MassAction {
  return {
    id: newMassId(),
    kind: 'undo-run',
    at: new Date().toISOString(),
    by: { kind: 'admin-token', id: 'tok1' },
    runId: 'run-1',
    mark: '1-0',
    done: records,
    kept: 2,
    records: Array.from({ length: records }, (_, i) => ({
      id: `r${i}`,
      before: { slug: `report-${i % 97}`, source: 'auto', status: 'matched' },
      after: { slug: null, source: 'admin', status: 'no_match' },
    })),
  };
}

describe('MassActionLog', () => {
  it('keeps a large action’s records apart from its summary and gives all of them back', async () => {
    const big = action(2 * MASS_RECORDS_PER_VALUE + 17);
    await log.save('inst-a', big);
    const summary = (await redis.get(keys.massAction('inst-a', big.id)))!;
    expect(summary.length).toBeLessThan(1_000);
    expect(await redis.llen(keys.massActionRecords('inst-a', big.id))).toBe(3);
    expect(await log.get('inst-a', big.id)).toEqual(big);

    const [listed] = await log.recent('inst-a');
    const { records: _records, ...head } = big;
    expect(listed).toEqual(head);
  });

  it('marks an action undone without touching its records or the time it has left', async () => {
    const done = action(5);
    await log.save('inst-b', done);
    await redis.expire(keys.massAction('inst-b', done.id), 1_000);
    await log.markUndone('inst-b', done.id, 'mlater');
    expect(await log.get('inst-b', done.id)).toEqual({ ...done, undoneBy: 'mlater' });
    const ttl = await redis.ttl(keys.massAction('inst-b', done.id));
    expect(ttl).toBeGreaterThan(900);
    expect(ttl).toBeLessThanOrEqual(1_000);
  });

  it('reads an action saved by the previous release, records in the same value', async () => {
    const old = action(40);
    await redis.set(keys.massAction('inst-c', old.id), JSON.stringify(old), 'EX', 3_600);
    await redis.lpush(keys.massActions('inst-c'), old.id);
    expect(await log.get('inst-c', old.id)).toEqual(old);
    const { records: _records, ...head } = old;
    expect(await log.recent('inst-c')).toEqual([head]);
    await log.markUndone('inst-c', old.id, 'mnext');
    expect(await log.get('inst-c', old.id)).toEqual({ ...old, undoneBy: 'mnext' });
  });

  it('does not offer an action whose records are not all there', async () => {
    const partial = action(MASS_RECORDS_PER_VALUE + 1);
    await log.save('inst-d', partial);
    await redis.rpop(keys.massActionRecords('inst-d', partial.id));
    expect(await log.get('inst-d', partial.id)).toBeNull();
  });
});
