import { z } from 'zod';
import { type CrmKind, storedCrmKindSchema } from '../crm-kind.js';
import type { RedisClient } from '../redis.js';
import { deleteByPattern } from '../redis.js';
import { Keys } from '../storage/keys.js';
import type { SecretBox } from '../util/secretbox.js';

/**
 * Installations live in Redis: one hash each. Tokens and the report-service API key are sealed with
 * AES-256-GCM, bound to the installation id, so nothing readable sits in Redis.
 */

/**
 * `pending`: installed by OAuth from a portal or org not let in yet (not in INSTALL_ALLOWLIST, no key of its
 * own, not approved by an operator). Nothing runs for it: no backfill, no report read, no CRM call. Whether an
 * installation is let in is `approvedBy` (see `isLetIn`), never its status: an installation that was never let
 * in keeps the status `pending` through refused tokens and reinstalls.
 */
export const installationStatusSchema = z.enum(['pending', 'connected', 'disconnected', 'key_invalid']);
export type InstallationStatus = z.infer<typeof installationStatusSchema>;

export const approvalSourceSchema = z.enum(['token', 'allowlist', 'admin', 'own_key', 'recorded_before']);

export const storedTokensSchema = z.object({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1).optional(),
  /** Epoch ms; absent for tokens that do not expire on a schedule (private apps, token mode). */
  expiresAt: z.number().optional(),
});
export type StoredTokens = z.infer<typeof storedTokensSchema>;

export const installationSchema = z.object({
  id: z.string().regex(/^[a-z]+-[A-Za-z0-9_-]+$/),
  crm: storedCrmKindSchema,
  /** The id of the CRM account (portal, org) the app is installed in. */
  externalId: z.string().min(1),
  mode: z.enum(['oauth', 'token']),
  status: installationStatusSchema,
  statusReason: z.string().optional(),
  instanceUrl: z.string().optional(),
  /** The CRM account's IANA time zone, where the CRM says (for a CRM that resets daily limits at its midnight). */
  timeZone: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Whether this installation has a report-service key of its own (the key itself is never in this object). */
  hasReportsApiKey: z.boolean(),
  reportsKeySandbox: z.boolean().optional(),
  reportsKeyCheckedAt: z.string().optional(),
  /** Alerts also become an activity on each linked record (a note or task: the provider's `activity`). Off by default. */
  alertActivity: z.boolean().optional(),
  /** The CRM user who installed the app (OAuth), as the CRM names them. */
  installedBy: z.string().optional(),
  /** The provider's connection (OAuth app) it was installed through; absent: the deployment's global app. */
  connectionId: z.string().optional(),
  /** The portal's or org's name (a hub domain, an org name), when the CRM said it. */
  accountName: z.string().optional(),
  /**
   * Who let it in: `token` (token mode), `allowlist`, `admin` (approved), `own_key` (a key of its own),
   * `recorded_before` (running before approvals were recorded; see migrations/002-approvals-recorded.ts).
   * Absent: not let in.
   */
  approvedBy: approvalSourceSchema.optional(),
  approvedAt: z.string().optional(),
  /**
   * When a reinstall asked to move the installation to another connection or instance host: the new tokens,
   * instance URL and connection are held (sealed) until an operator approves, and the installation waits,
   * pending, on its old ones. Absent: nothing is held.
   */
  changeHeldAt: z.string().optional(),
  /** An operator allowed a sandbox report key to write fixture scores into this production CRM. */
  allowFixtureWrites: z.boolean().optional(),
  /** Why record writes were last refused (a sandbox key on a production CRM), until allowed or a real key. */
  fixtureRefusal: z.string().optional(),
});
export type ApprovalSource = z.infer<typeof approvalSourceSchema>;
export type Installation = z.infer<typeof installationSchema>;

/** What a reinstall would change that needs the operator's approval: where the tokens are sent, and the app. */
const heldChangeSchema = z.object({
  tokens: storedTokensSchema,
  instanceUrl: z.string().optional(),
  connectionId: z.string().optional(),
  installedBy: z.string().optional(),
  accountName: z.string().optional(),
  timeZone: z.string().optional(),
});
type HeldChange = z.infer<typeof heldChangeSchema>;

/** The host (and port) of a URL; '' for none. */
function hostOf(url: string | null | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

export function installationId(crm: CrmKind, externalId: string): string {
  return `${crm}-${externalId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export class InstallationStore {
  readonly keys: Keys;

  constructor(
    private readonly redis: RedisClient,
    private readonly box: SecretBox,
    readonly prefix = 'rc',
  ) {
    this.keys = new Keys(prefix);
  }

  private key(id: string): string {
    return this.keys.installation(id);
  }

  private setKey(): string {
    return this.keys.installations();
  }

  async upsert(input: {
    crm: CrmKind;
    externalId: string;
    mode: 'oauth' | 'token';
    tokens: StoredTokens;
    instanceUrl?: string;
    timeZone?: string;
    installedBy?: string;
    accountName?: string;
    connectionId?: string;
  }): Promise<Installation> {
    const id = installationId(input.crm, input.externalId);
    const now = new Date().toISOString();
    const [existing, approvedBy, oldInstanceUrl, oldConnectionId] = await this.redis.hmget(
      this.key(id),
      'createdAt',
      'approvedBy',
      'instanceUrl',
      'connectionId',
    );
    // Another app or another host for an installation that exists: whoever installed may be someone else than
    // the org's own admin (a connection of theirs, a server of theirs), so nothing of the installation is
    // replaced until an operator approves. Token mode is the operator's own configuration.
    if (
      existing &&
      input.mode === 'oauth' &&
      (hostOf(oldInstanceUrl) !== hostOf(input.instanceUrl) ||
        (oldConnectionId ?? '') !== (input.connectionId ?? ''))
    ) {
      return this.holdChange(id, input, now);
    }
    // An OAuth installation waits until it is let in, however often it is installed again or its tokens are
    // refused meanwhile; one let in before (reconnecting) stays in, and token mode is the operator's own.
    const pending = input.mode === 'oauth' && !approvedBy;
    const fields: Record<string, string> = {
      id,
      crm: input.crm,
      externalId: input.externalId,
      mode: input.mode,
      status: pending ? 'pending' : 'connected',
      statusReason: '',
      createdAt: existing ?? now,
      updatedAt: now,
      tokens: this.box.seal(JSON.stringify(input.tokens), id),
    };
    if (input.instanceUrl) fields.instanceUrl = input.instanceUrl;
    if (input.timeZone) fields.timeZone = input.timeZone;
    if (input.mode === 'token' && !approvedBy) {
      fields.approvedBy = 'token';
      fields.approvedAt = now;
    }
    if (input.installedBy) fields.installedBy = input.installedBy.slice(0, 200);
    if (input.accountName) fields.accountName = input.accountName.slice(0, 200);
    // Written every time (empty: the global app), so a reinstall through another app replaces the old one.
    fields.connectionId = input.connectionId ?? '';
    // Two commands, not one transaction: the set of ids and each installation's hash lie in different slots on
    // a Redis Cluster. The id goes in first; `list` skips an id whose hash is not there (yet).
    await this.redis.sadd(this.setKey(), id);
    // A reinstall on the same connection and host is the newest word: a change held before is dropped with it.
    await this.redis
      .multi()
      .hset(this.key(id), fields)
      .hdel(this.key(id), 'heldChange', 'changeHeldAt')
      .exec();
    const saved = await this.get(id);
    if (!saved) throw new Error(`installation ${id} vanished while it was being saved`);
    return saved;
  }

  private async holdChange(
    id: string,
    input: Parameters<InstallationStore['upsert']>[0],
    now: string,
  ): Promise<Installation> {
    const held: HeldChange = {
      tokens: input.tokens,
      ...(input.instanceUrl ? { instanceUrl: input.instanceUrl } : {}),
      ...(input.connectionId ? { connectionId: input.connectionId } : {}),
      ...(input.installedBy ? { installedBy: input.installedBy.slice(0, 200) } : {}),
      ...(input.accountName ? { accountName: input.accountName.slice(0, 200) } : {}),
      ...(input.timeZone ? { timeZone: input.timeZone } : {}),
    };
    await this.redis
      .multi()
      .hset(this.key(id), {
        heldChange: this.box.seal(JSON.stringify(held), `${id}:held`),
        changeHeldAt: now,
        status: 'pending',
        statusReason: `reinstalled through ${input.connectionId ? `connection ${input.connectionId}` : 'the global app'} at ${hostOf(input.instanceUrl) || 'no instance URL'}: waits for an operator's approval`,
        updatedAt: now,
      })
      .hdel(this.key(id), 'approvedBy', 'approvedAt')
      .exec();
    const saved = await this.get(id);
    if (!saved) throw new Error(`installation ${id} vanished while a change was being held`);
    return saved;
  }

  /** Applies a held change (approve): its tokens, instance URL and connection replace the old ones. */
  private async applyHeldChange(id: string): Promise<void> {
    const sealed = await this.redis.hget(this.key(id), 'heldChange');
    if (!sealed) return;
    const held = heldChangeSchema.parse(JSON.parse(this.box.open(sealed, `${id}:held`)));
    const fields: Record<string, string> = {
      tokens: this.box.seal(JSON.stringify(held.tokens), id),
      connectionId: held.connectionId ?? '',
      instanceUrl: held.instanceUrl ?? '',
    };
    if (held.installedBy) fields.installedBy = held.installedBy;
    if (held.accountName) fields.accountName = held.accountName;
    if (held.timeZone) fields.timeZone = held.timeZone;
    await this.redis
      .multi()
      .hset(this.key(id), fields)
      .hdel(this.key(id), 'heldChange', 'changeHeldAt')
      .exec();
  }

  async get(id: string): Promise<Installation | null> {
    const h = await this.redis.hgetall(this.key(id));
    if (!h.id) return null;
    return installationSchema.parse({
      id: h.id,
      crm: h.crm,
      externalId: h.externalId,
      mode: h.mode,
      status: h.status,
      statusReason: h.statusReason || undefined,
      instanceUrl: h.instanceUrl || undefined,
      timeZone: h.timeZone || undefined,
      createdAt: h.createdAt,
      updatedAt: h.updatedAt,
      hasReportsApiKey: Boolean(h.reportsApiKey),
      reportsKeySandbox: h.reportsKeySandbox ? h.reportsKeySandbox === 'true' : undefined,
      reportsKeyCheckedAt: h.reportsKeyCheckedAt || undefined,
      alertActivity: h.alertActivity === 'true',
      allowFixtureWrites: h.allowFixtureWrites === 'true',
      fixtureRefusal: h.fixtureRefusal || undefined,
      installedBy: h.installedBy || undefined,
      connectionId: h.connectionId || undefined,
      accountName: h.accountName || undefined,
      approvedBy: h.approvedBy || undefined,
      approvedAt: h.approvedAt || undefined,
      changeHeldAt: h.changeHeldAt || undefined,
    });
  }

  /** Whether `id` names an installation, without reading it (one HEXISTS). */
  async exists(id: string): Promise<boolean> {
    return (await this.redis.hexists(this.key(id), 'id')) === 1;
  }

  async list(): Promise<Installation[]> {
    const ids = (await this.redis.smembers(this.setKey())).sort();
    const all = await Promise.all(ids.map((id) => this.get(id)));
    return all.filter((i): i is Installation => i !== null);
  }

  async getTokens(id: string): Promise<StoredTokens | null> {
    const sealed = await this.redis.hget(this.key(id), 'tokens');
    if (!sealed) return null;
    return storedTokensSchema.parse(JSON.parse(this.box.open(sealed, id)));
  }

  async setTokens(id: string, tokens: StoredTokens): Promise<void> {
    await this.redis.hset(this.key(id), {
      tokens: this.box.seal(JSON.stringify(tokens), id),
      updatedAt: new Date().toISOString(),
    });
  }

  /** Forgets the tokens (a refused refresh token makes them useless); the installation stays, to be reconnected. */
  async clearTokens(id: string): Promise<void> {
    await this.redis.hdel(this.key(id), 'tokens');
  }

  /**
   * Records how the installation is doing. One never let in stays `pending` whatever happens to it (a refused
   * token, a refused key): only the reason is kept, so nothing can turn it into one that runs or that offers
   * "reconnect" instead of "approve".
   */
  async setStatus(id: string, status: InstallationStatus, reason = ''): Promise<void> {
    const [exists, approvedBy] = await this.redis.hmget(this.key(id), 'id', 'approvedBy');
    if (!exists) return;
    await this.redis.hset(this.key(id), {
      status: approvedBy ? status : 'pending',
      statusReason: reason,
      updatedAt: new Date().toISOString(),
    });
  }

  /** Switches the alert activity (note, Task) on or off for this installation. */
  async setAlertActivity(id: string, on: boolean): Promise<void> {
    if (!(await this.redis.exists(this.key(id)))) return;
    await this.redis.hset(this.key(id), { alertActivity: String(on), updatedAt: new Date().toISOString() });
  }

  /** Allows (or stops allowing) fixture scores in a production CRM; either way the last refusal is cleared. */
  async setAllowFixtureWrites(id: string, allow: boolean): Promise<void> {
    if (!(await this.redis.exists(this.key(id)))) return;
    await this.redis
      .multi()
      .hset(this.key(id), { allowFixtureWrites: String(allow), updatedAt: new Date().toISOString() })
      .hdel(this.key(id), 'fixtureRefusal')
      .exec();
  }

  async setFixtureRefusal(id: string, reason: string): Promise<void> {
    if (!(await this.redis.exists(this.key(id)))) return;
    await this.redis.hset(this.key(id), { fixtureRefusal: reason });
  }

  /**
   * Lets an installation in; false when it was let in already (or is gone). HSETNX makes two approvals at
   * once (an operator's click and a key of its own) record one. A change held by `upsert` (another connection
   * or instance host) is let in by an operator (`admin`) alone, and then replaces the old tokens, instance URL
   * and connection.
   */
  async approve(id: string, by: ApprovalSource): Promise<boolean> {
    const [exists, approvedBy, held] = await this.redis.hmget(this.key(id), 'id', 'approvedBy', 'heldChange');
    if (!exists || approvedBy) return false;
    // A held change of connection or host is the operator's to approve: not the allowlist's, not a key's.
    if (held && by !== 'admin') return false;
    if ((await this.redis.hsetnx(this.key(id), 'approvedBy', by)) === 0) return false;
    if (held) await this.applyHeldChange(id);
    const now = new Date().toISOString();
    await this.redis.hset(this.key(id), {
      status: 'connected',
      statusReason: '',
      approvedAt: now,
      updatedAt: now,
    });
    return true;
  }

  /**
   * Records an installation that runs today as let in by `recorded_before`: installations that were let in
   * before the approval was a fact of its own carry no `approvedBy`. False when it has one already.
   */
  async recordLetInBefore(id: string): Promise<boolean> {
    return (await this.redis.hsetnx(this.key(id), 'approvedBy', 'recorded_before')) === 1;
  }

  async setReportsApiKey(id: string, apiKey: string, info: { sandbox: boolean }): Promise<void> {
    await this.redis
      .multi()
      .hset(this.key(id), {
        reportsApiKey: this.box.seal(apiKey, `${id}:reports`),
        reportsKeySandbox: String(info.sandbox),
        reportsKeyCheckedAt: new Date().toISOString(),
        updatedAt: new Date().toISOString(),
      })
      // A new key is asked again before the next write: the last refusal no longer holds.
      .hdel(this.key(id), 'fixtureRefusal')
      .exec();
  }

  /** Forgets the installation's own key: it uses the server's (REPORTS_API_KEY) from now on. */
  async clearReportsApiKey(id: string): Promise<void> {
    await this.redis
      .multi()
      .hdel(this.key(id), 'reportsApiKey', 'reportsKeySandbox', 'reportsKeyCheckedAt', 'fixtureRefusal')
      .hset(this.key(id), { updatedAt: new Date().toISOString() })
      .exec();
  }

  async getReportsApiKey(id: string): Promise<string | null> {
    const sealed = await this.redis.hget(this.key(id), 'reportsApiKey');
    return sealed ? this.box.open(sealed, `${id}:reports`) : null;
  }

  /**
   * Deletes the installation's hash, and with it the right to write its index, its runs' links and its pending
   * slugs: their write scripts (link-index.ts, run-links.ts, pending-slugs.ts) do nothing once the hash is gone
   * (same hash tag), so a batch still running cannot write state back after `remove` deleted it. The first step
   * of a removal; `remove` then deletes the rest.
   */
  async retire(id: string): Promise<void> {
    await this.redis.unlink(this.key(id));
  }

  /**
   * The last step of a removal, after `retire`: deletes every key scoped to the installation and its entry in
   * the set of ids. The hash is not deleted here: `retire` did that before the index and the sync history were
   * cleared (InstallationService.remove), so that no write lands after them. The CRM's own data is not touched.
   */
  async remove(id: string): Promise<void> {
    // A cluster cannot remove the hash and the set entry at once: an id left in the set without its hash (between
    // `retire` and here) is skipped by `list`.
    await deleteByPattern(this.redis, this.keys.instPattern(id));
    await this.redis.srem(this.setKey(), id);
  }
}
