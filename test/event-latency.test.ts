import { describe, expect, it } from 'vitest';
import { EventLatencies } from '../src/storage/event-latency.js';
import { Keys } from '../src/storage/keys.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

/** Issue 30: the event-to-CRM histogram, kept in Redis so that any process's workers add to one histogram. */

const { redis, freshPrefix } = redisWithFreshPrefixes('latency');

describe('EventLatencies', () => {
  it('adds observations from several writers into cumulative buckets, per source', async () => {
    const keys = new Keys(freshPrefix());
    // Two processes' workers.
    const a = new EventLatencies(redis(), keys);
    const b = new EventLatencies(redis(), keys);
    await a.record('report', [0.1, 0.9, 2.5]);
    await b.record('report', [0.3, 400]);
    await b.record('crm', [1]);
    const report = await a.totals('report');
    expect(report.count).toBe(5);
    expect(report.sum).toBeCloseTo(403.8);
    const at = (le: string) => report.buckets.find((x) => x.le === le)?.count;
    expect([at('0.25'), at('0.5'), at('1'), at('3'), at('300'), at('+Inf')]).toEqual([1, 2, 3, 4, 4, 5]);
    expect((await a.totals('crm')).count).toBe(1);
  });
});
