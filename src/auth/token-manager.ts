import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { CrmDisconnectedError, CrmTransientError, CrmUnauthorizedError } from '../crm-errors.js';
import type { Installation, InstallationStore, StoredTokens } from '../installations/store.js';
import type { RedisClient } from '../redis.js';
import { LuaScript } from '../storage/lua-script.js';

/**
 * Token refresh done once per installation across every process: an in-process promise so concurrent
 * callers in one process share a refresh, a Redis lock so processes do not race each other, a re-read of the
 * tokens after the lock (another process may have refreshed meanwhile), a cool-down after a failed refresh,
 * and a refused refresh token turning the installation `disconnected` instead of being retried for hours.
 */

export interface AccessTokenSource {
  /** A token believed valid now; refreshes first when it expires within the skew. */
  current(): Promise<string>;
  /** Called after the CRM refused `rejected`: returns a fresh token or throws a typed CRM error. */
  refreshAfterRejection(rejected: string): Promise<string>;
}

/** Thrown by a provider's refresher when the refresh token itself is refused (`invalid_grant`). */
/** Releases only the caller's own lock (locks-release.lua). */
const RELEASE_LOCK = LuaScript.load('locks-release');
const releaseLockReply = z.number();

export class RefreshRejectedError extends Error {
  readonly code = 'REFRESH_REJECTED';
  constructor(
    message: string,
    readonly providerCode?: string,
  ) {
    super(message);
    this.name = 'RefreshRejectedError';
  }
}

export type TokenRefresher = (tokens: StoredTokens, installation: Installation) => Promise<StoredTokens>;

/** A token the app asks for with its own credentials (a client-credentials grant), not an installation's. */
export interface AppToken {
  accessToken: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** Asks the CRM for a new app token; throws a typed CRM error when refused. */
export type AppTokenRequest = () => Promise<AppToken>;

/**
 * How long before its expiry an app token is asked for again. Shorter than installations' skew: an app token is
 * short-lived (half an hour) and a new one costs one request.
 */
const APP_TOKEN_SKEW_MS = 60_000;

export interface TokenManagerOptions {
  /** Refresh this long before expiry. */
  skewMs?: number;
  lockTtlMs?: number;
  /** After a failed (not refused) refresh, callers fail fast for this long instead of hammering the CRM. */
  cooldownMs?: number;
  lockPollMs?: number;
  /** Called once when an installation becomes disconnected, to stop its jobs. */
  onDisconnected?: (installationId: string, reason: string) => Promise<void>;
}

export class TokenManager {
  private readonly inFlight = new Map<string, Promise<string>>();
  /** App tokens by name, kept in this process: each process may hold its own, all valid at once. */
  private readonly appTokens = new Map<string, AppToken>();
  private readonly appInFlight = new Map<string, Promise<string>>();
  private readonly skewMs: number;
  private readonly lockTtlMs: number;
  private readonly cooldownMs: number;
  private readonly lockPollMs: number;

  constructor(
    private readonly store: InstallationStore,
    private readonly redis: RedisClient,
    /** By CRM kind (`installation.crm`). */
    private readonly refreshers: Readonly<Partial<Record<string, TokenRefresher>>>,
    private readonly options: TokenManagerOptions = {},
  ) {
    this.skewMs = options.skewMs ?? 5 * 60_000;
    this.lockTtlMs = options.lockTtlMs ?? 30_000;
    this.cooldownMs = options.cooldownMs ?? 30_000;
    this.lockPollMs = options.lockPollMs ?? 100;
  }

  source(installationId: string): AccessTokenSource {
    return {
      current: () => this.current(installationId),
      refreshAfterRejection: (rejected) => this.refresh(installationId, rejected),
    };
  }

  /**
   * The app token `name` (one per app credentials: every installation's reader shares it), asked for with
   * `request` when there is none or it expires within a minute, one request at a time in this process. A
   * client-credentials grant takes nothing another process holds, so processes need no lock between them.
   */
  appToken(name: string, request: AppTokenRequest): AccessTokenSource {
    return {
      current: async () => {
        const held = this.appTokens.get(name);
        if (held && held.expiresAt - APP_TOKEN_SKEW_MS > Date.now()) return held.accessToken;
        return this.requestAppToken(name, request, held?.accessToken ?? null);
      },
      refreshAfterRejection: (rejected) => this.requestAppToken(name, request, rejected),
    };
  }

  /** A new app token unless someone already replaced `stale` (null: none held). */
  private requestAppToken(name: string, request: AppTokenRequest, stale: string | null): Promise<string> {
    const held = this.appTokens.get(name);
    if (held && held.accessToken !== stale && held.expiresAt - APP_TOKEN_SKEW_MS > Date.now()) {
      return Promise.resolve(held.accessToken);
    }
    const running = this.appInFlight.get(name);
    if (running) return running;
    const p = request()
      .then((token) => {
        this.appTokens.set(name, token);
        return token.accessToken;
      })
      .finally(() => this.appInFlight.delete(name));
    this.appInFlight.set(name, p);
    return p;
  }

  async current(installationId: string): Promise<string> {
    const installation = await this.requireConnected(installationId);
    const tokens = await this.store.getTokens(installation.id);
    if (!tokens) throw new CrmDisconnectedError('installation has no stored tokens', installation.crm);
    if (tokens.expiresAt !== undefined && tokens.expiresAt - Date.now() < this.skewMs) {
      return this.refresh(installationId, tokens.accessToken);
    }
    return tokens.accessToken;
  }

  /** Refreshes unless someone already replaced `stale`; one refresh per installation at a time. */
  refresh(installationId: string, stale: string): Promise<string> {
    const running = this.inFlight.get(installationId);
    if (running) return running;
    const p = this.refreshAcrossProcesses(installationId, stale).finally(() =>
      this.inFlight.delete(installationId),
    );
    this.inFlight.set(installationId, p);
    return p;
  }

  private async requireConnected(installationId: string): Promise<Installation> {
    const installation = await this.store.get(installationId);
    if (!installation)
      throw new CrmDisconnectedError(`installation ${installationId} does not exist`, 'unknown');
    if (installation.status === 'disconnected') {
      throw new CrmDisconnectedError(
        `installation ${installationId} is disconnected${installation.statusReason ? `: ${installation.statusReason}` : ''}`,
        installation.crm,
      );
    }
    return installation;
  }

  private async refreshAcrossProcesses(installationId: string, stale: string): Promise<string> {
    const installation = await this.requireConnected(installationId);
    const cooldownKey = this.store.keys.refreshCooldown(installationId);
    const lockKey = this.store.keys.refreshLock(installationId);

    const cooling = await this.redis.pttl(cooldownKey);
    if (cooling > 0) {
      throw new CrmTransientError(
        `token refresh failed recently; next attempt in ${cooling} ms`,
        installation.crm,
      );
    }

    const lockValue = randomUUID();
    const deadline = Date.now() + this.lockTtlMs;
    while ((await this.redis.set(lockKey, lockValue, 'PX', this.lockTtlMs, 'NX')) !== 'OK') {
      if (Date.now() > deadline)
        throw new CrmTransientError('timed out waiting for a token refresh', installation.crm);
      await new Promise((r) => setTimeout(r, this.lockPollMs));
    }
    try {
      // Another process may have refreshed while we waited for the lock.
      const tokens = await this.store.getTokens(installationId);
      if (!tokens) throw new CrmDisconnectedError('installation has no stored tokens', installation.crm);
      const fresh = tokens.accessToken !== stale;
      const notExpiring = tokens.expiresAt === undefined || tokens.expiresAt - Date.now() >= this.skewMs;
      if (fresh && notExpiring) return tokens.accessToken;

      const refresher = this.refreshers[installation.crm];
      if (!tokens.refreshToken || !refresher) {
        throw new CrmUnauthorizedError(
          `the ${installation.crm} access token was refused and this installation has no refresh token: enter a new token`,
          installation.crm,
          401,
        );
      }
      try {
        const next = await refresher(tokens, installation);
        // Keep the old refresh token when the provider does not rotate it.
        const merged: StoredTokens = { ...next, refreshToken: next.refreshToken ?? tokens.refreshToken };
        await this.store.setTokens(installationId, merged);
        return merged.accessToken;
      } catch (err) {
        if (err instanceof RefreshRejectedError) {
          const reason = `the ${installation.crm} refresh token was refused (${err.providerCode ?? 'invalid_grant'}): reconnect the app`;
          await this.store.setStatus(installationId, 'disconnected', reason);
          await this.options.onDisconnected?.(installationId, reason);
          throw new CrmDisconnectedError(reason, installation.crm, 400, { cause: err });
        }
        await this.redis.set(cooldownKey, '1', 'PX', this.cooldownMs);
        throw new CrmTransientError(
          `token refresh failed: ${err instanceof Error ? err.message : String(err)}`,
          installation.crm,
          undefined,
          { cause: err },
        );
      }
    } finally {
      // Release only our own lock: a slow refresh may have outlived the TTL and another process holds it now.
      await RELEASE_LOCK.run(this.redis, [lockKey], [lockValue], releaseLockReply);
    }
  }
}
