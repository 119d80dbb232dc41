import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parse as parseDotenv } from 'dotenv';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import {
  ConfigError,
  type ConfigProblem,
  hostPortList,
  httpUrl,
  optionalText,
  positiveNumber,
  readEnvSection,
  urlWith,
} from './env-schema.js';
import { type ProviderConfigs, providers } from './providers.js';
import type { RedisClusterAuth } from './redis.js';

export { ConfigError } from './env-schema.js';

/**
 * Configuration is read once, from the environment with a `.env` file underneath it (real variables win).
 * Every problem is reported as one line naming the variable, so an operator can fix it without reading code.
 */

const redisUrl = urlWith(['redis:', 'rediss:'], 'expects a redis:// or rediss:// URL');

const encryptionKey = z
  .string()
  .trim()
  .refine((v) => /^[A-Za-z0-9+/_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32, {
    message: 'expects 32 bytes encoded as base64 (for example: openssl rand -base64 32)',
  });

/** An admin's name as ADMIN_TOKENS gives it: shown in the decision log and kept in the session cookie. */
export const ADMIN_NAME = /^[A-Za-z0-9_-]{1,32}$/;

export interface NamedAdminToken {
  name: string;
  token: string;
}

/**
 * ADMIN_TOKENS: comma-separated `name:token` pairs (`alice:<token>,bob:<token>`). Every entry is checked and
 * every bad one named by its place and name, never by its token (a secret).
 */
const namedTokens = z
  .string()
  .optional()
  .transform((raw, ctx): NamedAdminToken[] => {
    const entries = (raw ?? '').split(',').map((e) => e.trim());
    if (entries.every((e) => e === '')) return [];
    const named: NamedAdminToken[] = [];
    entries.forEach((entry, i) => {
      const place = `entry ${i + 1}`;
      const colon = entry.indexOf(':');
      if (colon < 0) {
        ctx.addIssue({
          code: 'custom',
          message: `${place} expects name:token (comma-separated pairs, e.g. alice:<token>,bob:<token>)`,
        });
        return;
      }
      const name = entry.slice(0, colon).trim();
      const token = entry.slice(colon + 1).trim();
      if (!ADMIN_NAME.test(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `${place} has no valid name: 1 to 32 letters, digits, '-' or '_' before the colon`,
        });
        return;
      }
      if (token.length < 16) {
        ctx.addIssue({
          code: 'custom',
          message: `the token of ${name} (${place}) expects at least 16 characters`,
        });
        return;
      }
      if (named.some((n) => n.name === name)) {
        ctx.addIssue({ code: 'custom', message: `${name} is named twice (${place}): one token per admin` });
        return;
      }
      if (named.some((n) => n.token === token)) {
        ctx.addIssue({
          code: 'custom',
          message: `the token of ${name} (${place}) is another admin's too: give each their own`,
        });
        return;
      }
      named.push({ name, token });
    });
    return named;
  });

const secretList = z
  .string()
  .trim()
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  )
  .optional();

/**
 * What Express's `trust proxy` is given: nobody (false), a number of proxy hops, or the proxies' names,
 * addresses and subnets. Never `true`: that believes every `X-Forwarded-For`, so each client would name its own
 * address.
 */
export type TrustProxy = false | number | string[];

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || !address) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** proxy-addr (what Express compiles the setting with) takes every entry: checked here, not at the first request. */
function compiles(entries: string[]): boolean {
  try {
    proxyaddr.compile(entries);
    return true;
  } catch {
    return false;
  }
}

export const TRUST_PROXY_TRUE_REFUSED =
  'is refused as true: it believes every X-Forwarded-For, so any client could choose its own address (unlimited admin token guesses, anyone locked out at will). Give the number of proxies in front of the app (1) or their addresses or subnets (10.0.0.0/8)';

/**
 * TRUST_PROXY: which proxies' `X-Forwarded-For` names the client. Empty or unset trusts none, so a caller
 * cannot choose its own address (the admin lockout is keyed by it).
 */
const trustProxy = z
  .string()
  .trim()
  .default('')
  .transform((v, ctx): TrustProxy => {
    if (v === '' || v === 'false') return false;
    if (v.toLowerCase() === 'true') {
      ctx.addIssue({ code: 'custom', message: TRUST_PROXY_TRUE_REFUSED });
      return z.NEVER;
    }
    if (/^\d+$/.test(v)) return Number(v);
    const entries = v
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e.length > 0);
    if (entries.length > 0 && entries.every(isProxyEntry) && compiles(entries)) return entries;
    ctx.addIssue({
      code: 'custom',
      message:
        'expects a number of proxy hops, or a comma-separated list of addresses, subnets (10.0.0.0/8) and loopback, linklocal, uniquelocal',
    });
    return z.NEVER;
  });

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const envSchema = z.object({
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: hostPortList,
  REDIS_CLUSTER_USERNAME: optionalText,
  REDIS_CLUSTER_PASSWORD: optionalText,
  REDIS_CLUSTER_TLS: z
    .enum(['true', 'false', ''], { error: 'expects true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  REDIS_CLUSTER_TLS_CA_FILE: optionalText,
  PORT: z.coerce
    .number({ error: 'expects a TCP port number' })
    .int('expects a whole port number')
    .min(0, 'expects a port from 0 to 65535')
    .max(65535, 'expects a port from 0 to 65535')
    .default(3000),
  APP_URL: httpUrl.optional(),
  ENCRYPTION_KEY: encryptionKey.optional(),
  ADMIN_TOKEN: z.string().trim().min(16, 'expects at least 16 characters').optional(),
  ADMIN_TOKENS: namedTokens,
  METRICS_TOKEN: z.string().trim().min(16, 'expects at least 16 characters').optional(),
  REPORTS_API_URL: httpUrl.optional(),
  REPORTS_API_KEY: optionalText,
  REPORTS_WEBHOOK_SECRET: secretList,
  REPORTS_WEBHOOK_SCHEME: z
    .enum(['standard', 'hex'], { error: 'expects standard or hex' })
    .default('standard'),
  REPORTS_WEBHOOK_HEADER: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9-]+$/, 'expects an HTTP header name')
    .default('x-signature'),
  RECONCILE_HOURS: positiveNumber('a number of hours greater than 0').default(24),
  REPORTS_RATE_PER_MINUTE: positiveNumber('a number of requests per minute greater than 0').optional(),
  REPORT_CACHE_SECONDS: z.coerce
    .number({ error: 'expects a whole number of seconds from 0 to 86400' })
    .int('expects a whole number of seconds from 0 to 86400')
    .min(0, 'expects a whole number of seconds from 0 to 86400')
    .max(86_400, 'expects a whole number of seconds from 0 to 86400')
    .default(600),
  REPORTS_TIMEOUT_MS: positiveNumber('a number of milliseconds greater than 0').default(10_000),
  REDIS_PREFIX: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]+$/, 'expects letters, digits, - or _')
    .default('rc'),
  TRUST_PROXY: trustProxy,
  INSTALL_ALLOWLIST: z
    .string()
    .trim()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e.length > 0),
    )
    .refine(
      (entries) => entries.every((e) => /^[a-z]+:[A-Za-z0-9_-]+$/.test(e)),
      `expects a comma-separated list of ${providers.map((p) => `${p.kind}:<${p.accountNoun}Id>`).join(' and ')}`,
    ),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `expects one of ${LOG_LEVELS.join(', ')}` }).default('info'),
});

/** Read at start-up so that a wrong path fails there, naming the variable, not at the first connection. */
function readCaFile(path: string): string {
  try {
    const pem = readFileSync(path, 'utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate in it');
    return pem;
  } catch (err) {
    throw new ConfigError(
      'REDIS_CLUSTER_TLS_CA_FILE',
      `cannot be read as a PEM CA bundle: ${(err as Error).message}`,
    );
  }
}

/** The application's own settings; each provider adds its section (see ProviderConfigs). */
export interface BaseConfig {
  redisUrl: string;
  /** Seed nodes of a Redis Cluster (REDIS_CLUSTER_NODES): when set, used instead of `redisUrl`. */
  redisClusterNodes: { host: string; port: number }[] | null;
  /** How every node of that cluster is reached: ACL user and password, TLS and the CA it trusts. */
  redisClusterAuth: RedisClusterAuth;
  port: number;
  appUrl: string;
  /** 32-byte key for AES-256-GCM; generated per process in demo mode. */
  encryptionKey: Buffer;
  adminToken: string;
  /** Named admins (ADMIN_TOKENS): the name goes into the session and into every decision they log. */
  adminTokens: NamedAdminToken[];
  /** Bearer token `GET /metrics` asks for (METRICS_TOKEN); null: the metrics are open. */
  metricsToken: string | null;
  reports: {
    apiUrl: string;
    apiKey: string | undefined;
    webhookSecrets: string[];
    webhookScheme: 'standard' | 'hex';
    webhookHeader: string;
  };
  reconcileHours: number;
  /**
   * The most requests per minute per report-service key (the operator's cost cap); undefined: none, the rate
   * is learnt. The service does not publish its limits.
   */
  reportsRatePerMinute: number | undefined;
  /**
   * How long a report read (200 or 404) or a search serves every run and job reading with the same key, unless
   * the service says the report changed first; 0 keeps nothing.
   */
  reportCacheSeconds: number;
  /** Per-attempt timeout of report-service calls. */
  reportsTimeoutMs: number;
  /** Prefix of every Redis key and BullMQ queue of this deployment. */
  redisPrefix: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Express `trust proxy`: whose X-Forwarded-For is believed (default: nobody's). */
  trustProxy: TrustProxy;
  /** `<kind>:<account id>` (a provider's kind and the id of its portal or org) whose OAuth installs start at once (others wait for approval). */
  installAllowlist: string[];
}

export type Config = BaseConfig & ProviderConfigs;

export interface LoadConfigOptions {
  /**
   * `demo` and `sandbox` run without secrets: they make their own. `read-only` is for commands that only read
   * the state (`status`, `record`): Redis and ENCRYPTION_KEY suffice, the admin token and the report service's
   * address are not asked for.
   */
  mode?: 'production' | 'demo' | 'read-only';
  /** Defaults to `.env` in the working directory. Pass `null` to read no file. */
  envFile?: string | null;
  /** Values the caller fixes (the demo points the connector at its local services). */
  overrides?: Record<string, string>;
}

export function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  return parseDotenv(readFileSync(path));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, options: LoadConfigOptions = {}): Config {
  const mode = options.mode ?? 'production';
  const merged = mergedEnv(env, options);

  // Every problem is collected first, then reported together: the schema's, the required secrets', each CRM's.
  const problems: ConfigProblem[] = [];
  const collect = <T>(read: () => T): T | undefined => {
    try {
      return read();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
      return undefined;
    }
  };
  const e = collect(() => readEnvSection(envSchema, merged));
  // Each provider reads its own keys; the cast is the one place the list's sections meet their kinds.
  const sectionList = providers.map((p) => [p.kind, collect(() => p.readConfig(merged))] as const);
  const { encryptionKey, adminToken, apiUrl } = requiredSecrets(e, mode, problems);
  ConfigError.throwAll(problems);
  if (!e || !encryptionKey || !adminToken || !apiUrl)
    throw new Error('configuration problems were not collected');
  const sections = Object.fromEntries(sectionList) as ProviderConfigs;

  return {
    redisUrl: e.REDIS_URL,
    redisClusterNodes: e.REDIS_CLUSTER_NODES,
    redisClusterAuth: {
      username: e.REDIS_CLUSTER_USERNAME ?? null,
      password: e.REDIS_CLUSTER_PASSWORD ?? null,
      tls: e.REDIS_CLUSTER_TLS || e.REDIS_CLUSTER_TLS_CA_FILE !== undefined,
      tlsCa: e.REDIS_CLUSTER_TLS_CA_FILE ? readCaFile(e.REDIS_CLUSTER_TLS_CA_FILE) : null,
    },
    port: e.PORT,
    appUrl: e.APP_URL ?? `http://localhost:${e.PORT}`,
    encryptionKey,
    adminToken,
    adminTokens: e.ADMIN_TOKENS ?? [],
    metricsToken: e.METRICS_TOKEN ?? null,
    reports: {
      apiUrl,
      apiKey: e.REPORTS_API_KEY,
      webhookSecrets: e.REPORTS_WEBHOOK_SECRET ?? [],
      webhookScheme: e.REPORTS_WEBHOOK_SCHEME,
      webhookHeader: e.REPORTS_WEBHOOK_HEADER,
    },
    ...sections,
    reconcileHours: e.RECONCILE_HOURS,
    reportsRatePerMinute: e.REPORTS_RATE_PER_MINUTE,
    reportsTimeoutMs: e.REPORTS_TIMEOUT_MS,
    reportCacheSeconds: e.REPORT_CACHE_SECONDS,
    redisPrefix: e.REDIS_PREFIX,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    installAllowlist: e.INSTALL_ALLOWLIST,
  };
}

/** The `.env` file's values, overridden by the environment's, overridden by the caller's. */
function mergedEnv(env: NodeJS.ProcessEnv, options: LoadConfigOptions): Record<string, string | undefined> {
  const fromFile = options.envFile === null ? {} : readEnvFile(options.envFile ?? '.env');
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) merged[k] = v;
  Object.assign(merged, options.overrides ?? {});
  return merged;
}

/**
 * The secrets and the address every mode needs, made up where the mode allows (a demo makes its own keys; a
 * read-only command needs no admin token nor report service); each one missing is added to `problems`.
 */
function requiredSecrets(
  e: z.output<typeof envSchema> | undefined,
  mode: NonNullable<LoadConfigOptions['mode']>,
  problems: ConfigProblem[],
): { encryptionKey?: Buffer; adminToken?: string; apiUrl?: string } {
  const demo = mode === 'demo';
  const readOnly = mode === 'read-only';
  const missing = (variable: string, expectation: string): undefined => {
    problems.push({ variable, expectation });
    return undefined;
  };
  const encryptionKey = e?.ENCRYPTION_KEY
    ? Buffer.from(e.ENCRYPTION_KEY, 'base64')
    : demo
      ? randomKey()
      : missing('ENCRYPTION_KEY', 'is required: 32 bytes as base64 (openssl rand -base64 32)');
  const named = e?.ADMIN_TOKENS ?? [];
  if (e?.ADMIN_TOKEN && named.some((n) => n.token === e.ADMIN_TOKEN)) {
    missing('ADMIN_TOKENS', 'holds ADMIN_TOKEN as a named token: give the named admins tokens of their own');
  }
  // With named admins only, the unnamed token is one of theirs: it is matched as that admin's first (AdminAuth).
  const adminToken =
    e?.ADMIN_TOKEN ??
    named[0]?.token ??
    (demo || readOnly
      ? randomKey().toString('base64url')
      : missing('ADMIN_TOKEN', 'is required (or ADMIN_TOKENS): a long random string'));
  const apiUrl =
    e?.REPORTS_API_URL ??
    (readOnly
      ? READ_ONLY_REPORTS_URL
      : missing('REPORTS_API_URL', "is required: the report service's base URL"));
  return { encryptionKey, adminToken, apiUrl };
}

/** A read-only command calls no report service: an address that cannot be reached stands in for it. */
const READ_ONLY_REPORTS_URL = 'http://report-service.invalid';

function randomKey(): Buffer {
  return globalThis.crypto.getRandomValues(Buffer.alloc(32));
}
