import { randomBytes } from 'node:crypto';
import { SandboxHttpError } from './http-error.js';
import { BUILT_IN_KEYS, type Scope } from './sandbox-facts.js';

export interface ApiKey {
  key: string;
  scopes: Scope[];
  /** Every sandbox key is one; a registered key may claim not to be, to stand in for a live key. */
  sandbox: boolean;
  /** Overrides the sandbox-wide limit for this key. */
  rateLimitPerMinute?: number;
}

export interface KeyRegistration {
  key?: string;
  scopes: Scope[];
  sandbox?: boolean;
  rateLimitPerMinute?: number;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token in an `Authorization: Bearer …` header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header)?.[1] : undefined;
}

/** The keys the sandbox accepts: the CONTRACT's four plus any a test registers. */
export class ApiKeyRegistry {
  private readonly keys = new Map<string, ApiKey>();
  private readonly revoked = new Set<string>();

  constructor() {
    for (const builtIn of BUILT_IN_KEYS) {
      this.keys.set(builtIn.key, { key: builtIn.key, scopes: [...builtIn.scopes], sandbox: true });
      if (builtIn.revoked) this.revoked.add(builtIn.key);
    }
  }

  register(registration: KeyRegistration): ApiKey {
    const key = registration.key ?? `sk_sandbox_${randomBytes(12).toString('hex')}`;
    const entry: ApiKey = {
      key,
      scopes: [...new Set(registration.scopes)],
      sandbox: registration.sandbox ?? true,
    };
    if (registration.rateLimitPerMinute !== undefined)
      entry.rateLimitPerMinute = registration.rateLimitPerMinute;
    this.keys.set(key, entry);
    this.revoked.delete(key);
    return { ...entry, scopes: [...entry.scopes] };
  }

  /**
   * The key behind an Authorization header. `extraRevoked` are keys revoked by fault injection, which lasts
   * only until the faults are cleared, so it is not written into the registry.
   */
  authenticate(header: string | undefined, extraRevoked: ReadonlySet<string> = new Set()): ApiKey {
    const token = bearerToken(header);
    if (!token) throw new SandboxHttpError(401, 'unauthorized', 'send Authorization: Bearer <API key>');
    const key = this.keys.get(token);
    if (!key) throw new SandboxHttpError(401, 'unauthorized', 'the API key is not valid');
    if (this.revoked.has(token) || extraRevoked.has(token)) {
      throw new SandboxHttpError(401, 'unauthorized', 'the API key has been revoked');
    }
    return key;
  }
}

export function requireScope(key: ApiKey, scope: Scope): void {
  if (!key.scopes.includes(scope)) {
    throw new SandboxHttpError(403, 'forbidden', `this endpoint needs the ${scope} scope`);
  }
}
