import { describe, expect, it } from 'vitest';
import { linkIndexOf } from '../src/app/stores.js';
import type { CompanyRecord, CrmConnector } from '../src/crm/connector.js';
import { UnlistedRecords } from '../src/pipeline/unlisted-records.js';
import { Keys } from '../src/storage/keys.js';
import { MergeForwarding } from '../src/storage/merge-forwarding.js';
import { fingerprintOf, type RecordState } from '../src/storage/record-state.js';
import { redisWithFreshPrefixes } from './support/redis-prefixes.js';

/**
 * The two pieces of record bookkeeping behind a resync and a merge, on the real Redis: a listing pass forgets
 * exactly the indexed records the CRM no longer has (one created while it listed stays), and a merged-away
 * record forwards to its survivor.
 */

const { redis, freshPrefix } = redisWithFreshPrefixes('unlisted');

function linked(recordId: string, slug: string): RecordState {
  return {
    recordId,
    slug,
    status: 'matched',
    score: 60,
    autoLinked: true,
    unlinkedName: null,
    review: null,
    fingerprint: fingerprintOf({ name: `Company ${recordId}`, domain: null, fields: { slug } }),
  };
}

/** A CRM that has exactly `present` and counts its reads. */
function crmWith(present: Set<string>): { connector: CrmConnector; reads: string[][] } {
  const reads: string[][] = [];
  const connector = {
    limits: { readBatchSize: 2 },
    readCompanies: async (ids: string[]) => {
      reads.push(ids);
      return ids
        .filter((id) => present.has(id))
        .map((id): CompanyRecord => ({ id, name: id, fields: {} }) as CompanyRecord);
    },
  } as unknown as CrmConnector;
  return { connector, reads };
}

describe('UnlistedRecords', () => {
  it('forgets the indexed records neither listed nor still in the CRM, and keeps one created meanwhile', async () => {
    const keys = new Keys(freshPrefix());
    const index = linkIndexOf(redis(), keys);
    await redis().hset(keys.installation('i1'), 'id', 'i1'); // the index writes only for an installation
    await index.apply(
      'i1',
      ['a', 'b', 'c', 'd', 'e'].map((id) => linked(id, `report-${id}`)),
    );
    const unlisted = new UnlistedRecords(redis(), keys);
    await unlisted.addListed('i1', 'run-1', ['a', 'b']);
    await unlisted.addListed('i1', 'run-1', ['b', 'c']); // a page listed again after a killed lister
    // d and e were not listed: d is gone from the CRM, e was created after its page was listed.
    const { connector, reads } = crmWith(new Set(['a', 'b', 'c', 'e']));
    expect(await unlisted.forgetUnlisted(index, connector, 'i1', 'run-1')).toEqual(['d']);
    expect(reads.flat().sort()).toEqual(['d', 'e']);
    expect(await index.slugs.recordsForSlug('i1', 'report-d')).toEqual([]);
    expect(await index.slugs.recordsForSlug('i1', 'report-e')).toEqual(['e']);
    expect(await redis().keys(`${keys.inst('i1')}:listed:*`)).toEqual([]);
  });
});

describe('MergeForwarding', () => {
  it('replaces merged-away records by their survivor, through a merge of a merge, each once', async () => {
    const keys = new Keys(freshPrefix());
    const forwarding = new MergeForwarding(redis(), keys);
    await forwarding.record('i1', ['l1', 'l2'], 's1');
    await forwarding.record('i1', ['s1'], 's2');
    expect(await forwarding.resolve('i1', ['x', 'l1', 'l2', 's2'])).toEqual(['x', 's2']);
    expect(await forwarding.resolve('i2', ['l1'])).toEqual(['l1']);
    expect(await redis().ttl(`${keys.inst('i1')}:merged-into`)).toBeGreaterThan(0);
  });
});
