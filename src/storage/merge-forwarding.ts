import type { RedisClient } from '../redis.js';
import type { Keys } from './keys.js';

/**
 * Where each record merged away went: loser id -> survivor id, per installation, kept a day. A merge moves the
 * loser's link to the survivor in steps (the CRM write, the survivor's update, the index); an event of that
 * report that looks up its records in between finds the loser, and through this the survivor, so the survivor
 * gets the event at once (its update, an alert's activity) instead of nothing. The loser leaves the link index
 * only after the survivor is in it.
 */

const FORWARD_TTL_SECONDS = 24 * 3600;

export class MergeForwarding {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** In the installation's slot: removing the installation removes it too. */
  private key(installationId: string): string {
    return `${this.keys.inst(installationId)}:merged-into`;
  }

  async record(installationId: string, losers: readonly string[], survivor: string): Promise<void> {
    if (losers.length === 0) return;
    const key = this.key(installationId);
    await this.redis
      .multi()
      .hset(key, Object.fromEntries(losers.map((id) => [id, survivor])))
      .expire(key, FORWARD_TTL_SECONDS)
      .exec();
  }

  /**
   * The records with each merged-away one replaced by its survivor (followed through at most a few merges in
   * a row), each once, in their order.
   */
  async resolve(installationId: string, recordIds: readonly string[]): Promise<string[]> {
    if (recordIds.length === 0) return [];
    let current = [...recordIds];
    for (let hop = 0; hop < 3; hop++) {
      const targets = await this.redis.hmget(this.key(installationId), ...current);
      if (targets.every((t) => t === null)) break;
      current = current.map((id, i) => targets[i] ?? id);
    }
    return [...new Set(current)];
  }
}
