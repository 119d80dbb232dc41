import { existsSync, readFileSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';
import { z } from 'zod';

/**
 * Configuration is read once, from the environment with a `.env` file underneath it (real variables win).
 * Every problem is reported as one line naming the variable, so an operator can fix it without reading code.
 */

const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'expects an http(s) URL')
  .transform((v) => v.replace(/\/+$/, ''));

const redisUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'redis:' || u.protocol === 'rediss:';
    } catch {
      return false;
    }
  }, 'expects a redis:// or rediss:// URL');

const positiveNumber = (what: string) =>
  z.coerce.number({ error: `expects ${what}` }).refine((n) => Number.isFinite(n) && n > 0, `expects ${what}`);

const encryptionKey = z
  .string()
  .trim()
  .refine((v) => /^[A-Za-z0-9+/_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32, {
    message: 'expects 32 bytes encoded as base64 (for example: openssl rand -base64 32)',
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

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const envSchema = z.object({
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  PORT: z.coerce
    .number({ error: 'expects a TCP port number' })
    .int('expects a whole port number')
    .min(0, 'expects a port from 0 to 65535')
    .max(65535, 'expects a port from 0 to 65535')
    .default(3000),
  APP_URL: httpUrl.optional(),
  ENCRYPTION_KEY: encryptionKey.optional(),
  ADMIN_TOKEN: z.string().trim().min(16, 'expects at least 16 characters').optional(),
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
  HUBSPOT_CLIENT_ID: optionalText,
  HUBSPOT_CLIENT_SECRET: optionalText,
  HUBSPOT_ACCESS_TOKEN: optionalText,
  HUBSPOT_API_URL: httpUrl.default('https://api.hubapi.com'),
  HUBSPOT_AUTHORIZE_URL: httpUrl.default('https://app.hubspot.com/oauth/authorize'),
  SALESFORCE_CLIENT_ID: optionalText,
  SALESFORCE_CLIENT_SECRET: optionalText,
  SALESFORCE_LOGIN_URL: httpUrl.default('https://login.salesforce.com'),
  SALESFORCE_INSTANCE_URL: httpUrl.optional(),
  SALESFORCE_ACCESS_TOKEN: optionalText,
  SALESFORCE_API_VERSION: z
    .string()
    .trim()
    .regex(/^\d{2,3}\.0$/, 'expects an API version such as 63.0')
    .default('63.0'),
  SALESFORCE_POLL_SECONDS: positiveNumber('a number of seconds greater than 0').default(120),
  SALESFORCE_USAGE_PAUSE_SHARE: z.coerce
    .number({ error: 'expects a share between 0 and 1' })
    .gt(0, 'expects a share between 0 and 1')
    .max(1, 'expects a share between 0 and 1')
    .default(0.8),
  RECONCILE_HOURS: positiveNumber('a number of hours greater than 0').default(24),
  REPORTS_RATE_PER_MINUTE: positiveNumber('a number of requests per minute greater than 0').default(600),
  REPORTS_TIMEOUT_MS: positiveNumber('a number of milliseconds greater than 0').default(10_000),
  REDIS_PREFIX: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]+$/, 'expects letters, digits, - or _')
    .default('rc'),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `expects one of ${LOG_LEVELS.join(', ')}` }).default('info'),
});

export type RawEnv = z.input<typeof envSchema>;

export interface Config {
  redisUrl: string;
  port: number;
  appUrl: string;
  /** 32-byte key for AES-256-GCM; generated per process in demo mode. */
  encryptionKey: Buffer;
  adminToken: string;
  reports: {
    apiUrl: string;
    apiKey: string | undefined;
    webhookSecrets: string[];
    webhookScheme: 'standard' | 'hex';
    webhookHeader: string;
  };
  hubspot: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    accessToken: string | undefined;
    apiUrl: string;
    authorizeUrl: string;
  };
  salesforce: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    loginUrl: string;
    instanceUrl: string | undefined;
    accessToken: string | undefined;
    apiVersion: string;
    pollSeconds: number;
    usagePauseShare: number;
  };
  reconcileHours: number;
  /** Requests per minute per report-service key; the service does not publish its limits. */
  reportsRatePerMinute: number;
  /** Per-attempt timeout of report-service calls. */
  reportsTimeoutMs: number;
  /** Prefix of every Redis key and BullMQ queue of this deployment. */
  redisPrefix: string;
  logLevel: (typeof LOG_LEVELS)[number];
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(
    readonly variable: string,
    readonly expectation: string,
  ) {
    super(`${variable} ${expectation}`);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** `demo` and `sandbox` run without secrets: they make their own. */
  mode?: 'production' | 'demo';
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
  const fromFile = options.envFile === null ? {} : readEnvFile(options.envFile ?? '.env');
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) merged[k] = v;
  Object.assign(merged, options.overrides ?? {});

  // Only the variables we own are passed to zod, so the error for an unknown variable never happens.
  const known = Object.fromEntries(Object.keys(envSchema.shape).map((k) => [k, merged[k]]));
  const parsed = envSchema.safeParse(known);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'configuration');
    const message =
      issue.code === 'invalid_type' && merged[variable] === undefined ? 'is required' : issue.message;
    throw new ConfigError(variable, message);
  }
  const e = parsed.data;

  const missing = (variable: string, expectation: string): never => {
    throw new ConfigError(variable, expectation);
  };

  const demo = mode === 'demo';
  const encryptionKey = e.ENCRYPTION_KEY
    ? Buffer.from(e.ENCRYPTION_KEY, 'base64')
    : demo
      ? randomKey()
      : missing('ENCRYPTION_KEY', 'is required: 32 bytes as base64 (openssl rand -base64 32)');
  const adminToken =
    e.ADMIN_TOKEN ??
    (demo ? randomKey().toString('base64url') : missing('ADMIN_TOKEN', 'is required: a long random string'));
  const apiUrl =
    e.REPORTS_API_URL ?? missing('REPORTS_API_URL', "is required: the report service's base URL");

  if (e.SALESFORCE_INSTANCE_URL && !e.SALESFORCE_ACCESS_TOKEN) {
    throw new ConfigError('SALESFORCE_ACCESS_TOKEN', 'is required when SALESFORCE_INSTANCE_URL is set');
  }
  if (e.SALESFORCE_ACCESS_TOKEN && !e.SALESFORCE_INSTANCE_URL) {
    throw new ConfigError('SALESFORCE_INSTANCE_URL', 'is required when SALESFORCE_ACCESS_TOKEN is set');
  }
  if (e.HUBSPOT_CLIENT_ID && !e.HUBSPOT_CLIENT_SECRET) {
    throw new ConfigError('HUBSPOT_CLIENT_SECRET', 'is required when HUBSPOT_CLIENT_ID is set');
  }
  if (e.SALESFORCE_CLIENT_ID && !e.SALESFORCE_CLIENT_SECRET) {
    throw new ConfigError('SALESFORCE_CLIENT_SECRET', 'is required when SALESFORCE_CLIENT_ID is set');
  }

  return {
    redisUrl: e.REDIS_URL,
    port: e.PORT,
    appUrl: e.APP_URL ?? `http://localhost:${e.PORT}`,
    encryptionKey,
    adminToken,
    reports: {
      apiUrl,
      apiKey: e.REPORTS_API_KEY,
      webhookSecrets: e.REPORTS_WEBHOOK_SECRET ?? [],
      webhookScheme: e.REPORTS_WEBHOOK_SCHEME,
      webhookHeader: e.REPORTS_WEBHOOK_HEADER,
    },
    hubspot: {
      clientId: e.HUBSPOT_CLIENT_ID,
      clientSecret: e.HUBSPOT_CLIENT_SECRET,
      accessToken: e.HUBSPOT_ACCESS_TOKEN,
      apiUrl: e.HUBSPOT_API_URL,
      authorizeUrl: e.HUBSPOT_AUTHORIZE_URL,
    },
    salesforce: {
      clientId: e.SALESFORCE_CLIENT_ID,
      clientSecret: e.SALESFORCE_CLIENT_SECRET,
      loginUrl: e.SALESFORCE_LOGIN_URL,
      instanceUrl: e.SALESFORCE_INSTANCE_URL,
      accessToken: e.SALESFORCE_ACCESS_TOKEN,
      apiVersion: e.SALESFORCE_API_VERSION,
      pollSeconds: e.SALESFORCE_POLL_SECONDS,
      usagePauseShare: e.SALESFORCE_USAGE_PAUSE_SHARE,
    },
    reconcileHours: e.RECONCILE_HOURS,
    reportsRatePerMinute: e.REPORTS_RATE_PER_MINUTE,
    reportsTimeoutMs: e.REPORTS_TIMEOUT_MS,
    redisPrefix: e.REDIS_PREFIX,
    logLevel: e.LOG_LEVEL,
  };
}

function randomKey(): Buffer {
  return globalThis.crypto.getRandomValues(Buffer.alloc(32));
}
