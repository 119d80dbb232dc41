import type { ProviderStorage } from '../../../src/crm/provider.js';
import { SALESFORCE_PROVIDER } from '../provider.js';

/**
 * Where an installation's Change Data Capture subscription stands on the event bus: the replay id of the last
 * event whose changes are queued (or the latest id an idle stream reported), stored base64 in Redis. Written only
 * after the changes of a batch are queued, so a worker killed in between replays that batch (at least once);
 * the pipeline's writes are idempotent. Kept for 72 hours after the last write, as long as the bus keeps events:
 * an older id would be refused anyway.
 */
const KEPT_SECONDS = 72 * 3600;

export class ReplayStore {
  constructor(private readonly storage: Pick<ProviderStorage, 'redis' | 'keys'>) {}

  private key(installationId: string): string {
    return this.storage.keys.provider(SALESFORCE_PROVIDER, 'cdc', 'replay', installationId);
  }

  async get(installationId: string): Promise<Buffer | null> {
    const stored = await this.storage.redis.get(this.key(installationId));
    return stored ? Buffer.from(stored, 'base64') : null;
  }

  async set(installationId: string, replayId: Buffer): Promise<void> {
    await this.storage.redis.set(this.key(installationId), replayId.toString('base64'), 'EX', KEPT_SECONDS);
  }

  async clear(installationId: string): Promise<void> {
    await this.storage.redis.del(this.key(installationId));
  }
}
