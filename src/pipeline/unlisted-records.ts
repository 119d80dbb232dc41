import type { CrmConnector } from '../crm/connector.js';
import type { RedisClient } from '../redis.js';
import type { Keys } from '../storage/keys.js';
import { scanLinearHash } from '../storage/linear-hash.js';
import type { LinkIndex } from '../storage/link-index.js';

/**
 * A listing pass that forgets records gone from the CRM: each listed page's ids go into a set of the run (of
 * every full listing, so one asked to forget later joins it: SyncRuns.begin),
 * and when the listing is done every record the link index knows and the set lacks is read once more from the
 * CRM; those the CRM does not return are forgotten. Reading before forgetting keeps a record created while the
 * listing ran (after its page) in the index. Used when the CRM cannot say what was deleted (a delete log
 * that keeps some days only: a poll paused longer has lost deletions).
 */

/** The set outlives a stalled run by this long and then goes by itself. */
const LISTED_TTL_SECONDS = 3 * 86_400;
/** Ids per SMISMEMBER call. */
const CHECK_CHUNK = 1_000;

export class UnlistedRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** In the installation's slot, so removing the installation removes it too. */
  private listedKey(installationId: string, runId: string): string {
    return `${this.keys.inst(installationId)}:listed:${runId}`;
  }

  /** A listed page's ids (a page listed again after a killed lister adds nothing new). */
  async addListed(installationId: string, runId: string, recordIds: readonly string[]): Promise<void> {
    if (recordIds.length === 0) return;
    const key = this.listedKey(installationId, runId);
    await this.redis
      .multi()
      .sadd(key, ...recordIds)
      .expire(key, LISTED_TTL_SECONDS)
      .exec();
  }

  /** A listing's set once nothing will forget from it. */
  async drop(installationId: string, runId: string): Promise<void> {
    await this.redis.unlink(this.listedKey(installationId, runId));
  }

  /** Forgets the indexed records the listing did not see and the CRM does not return; returns them. */
  async forgetUnlisted(
    index: LinkIndex,
    connector: CrmConnector,
    installationId: string,
    runId: string,
  ): Promise<string[]> {
    const key = this.listedKey(installationId, runId);
    const known: string[] = [];
    await scanLinearHash(this.redis, this.keys.recordStates(installationId), (recordId) => {
      known.push(recordId);
      return true;
    });
    const unlisted: string[] = [];
    const unique = [...new Set(known)];
    for (let i = 0; i < unique.length; i += CHECK_CHUNK) {
      const ids = unique.slice(i, i + CHECK_CHUNK);
      const member = await this.redis.smismember(key, ...ids);
      ids.forEach((id, j) => {
        if (member[j] !== 1) unlisted.push(id);
      });
    }
    const gone: string[] = [];
    const size = connector.limits.readBatchSize;
    for (let i = 0; i < unlisted.length; i += size) {
      const ids = unlisted.slice(i, i + size);
      const present = new Set((await connector.readCompanies(ids)).map((r) => r.id));
      gone.push(...ids.filter((id) => !present.has(id)));
    }
    if (gone.length > 0) await index.forget(installationId, gone);
    await this.redis.unlink(key);
    return gone;
  }
}
