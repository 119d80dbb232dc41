import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * JSON logs on stderr (stdout is reserved for `--json` output). Anything that could hold a credential is
 * redacted by path; `redactSecrets` below also scrubs values that end up inside messages.
 */

export const REDACT_PATHS = [
  'token',
  'accessToken',
  'refreshToken',
  'access_token',
  'refresh_token',
  'apiKey',
  'api_key',
  'secret',
  'clientSecret',
  'client_secret',
  'password',
  'authorization',
  'Authorization',
  'code_verifier',
  'codeVerifier',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.access_token',
  '*.refresh_token',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.clientSecret',
  '*.client_secret',
  '*.password',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers["webhook-signature"]',
];

/**
 * Header names that carry a webhook signature, whatever the sender calls it (`webhook-signature`, a CRM's
 * `x-<crm>-signature-v3`): redacted in any `headers` object logged at the top or one level down, as redaction
 * by path needs the exact name.
 */
const SIGNATURE_HEADER = /signature/i;

function withoutSignatures(headers: unknown): unknown {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return headers;
  const entries = Object.entries(headers);
  if (!entries.some(([name]) => SIGNATURE_HEADER.test(name))) return headers;
  return Object.fromEntries(
    entries.map(([name, value]) => [name, SIGNATURE_HEADER.test(name) ? '[REDACTED]' : value]),
  );
}

/** The log object with signature headers redacted (see SIGNATURE_HEADER); the caller's object is not changed. */
export function redactSignatureHeaders(object: Record<string, unknown>): Record<string, unknown> {
  let out = object;
  const set = (key: string, value: unknown) => {
    if (out === object) out = { ...object };
    out[key] = value;
  };
  if ('headers' in object) {
    const headers = withoutSignatures(object.headers);
    if (headers !== object.headers) set('headers', headers);
  }
  for (const [key, value] of Object.entries(object)) {
    if (typeof value !== 'object' || value === null || !('headers' in value)) continue;
    const inner = value as Record<string, unknown>;
    const headers = withoutSignatures(inner.headers);
    if (headers !== inner.headers) set(key, { ...inner, headers });
  }
  return out;
}

const SECRET_PATTERNS: RegExp[] = [
  /Bearer\s+[A-Za-z0-9._~+/=-]+/g,
  /\bsk_[A-Za-z0-9_]+/g,
  /\bwhsec_[A-Za-z0-9+/=]+/g,
  /\b(access_token|refresh_token|client_secret|code_verifier|code)=([^&\s"]+)/g,
];

/** Scrubs credentials out of free text (error messages, URLs) before it is logged or shown. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    out = out.replace(pattern, (match, name: string | undefined) =>
      name && match.includes('=') ? `${name}=[REDACTED]` : '[REDACTED]',
    );
  }
  return out;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      formatters: { log: redactSignatureHeaders },
      serializers: {
        // Messages and stacks can quote credentials (URLs with tokens, echoed keys): scrub them.
        err: (err: unknown) =>
          err instanceof Error
            ? { type: err.name, message: redactSecrets(err.message), code: codeOf(err) }
            : { type: typeof err, message: redactSecrets(String(err)) },
      },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? redactSecrets(a) : a)) as Parameters<
            typeof method
          >;
          method.apply(this, scrubbed);
        },
      },
    },
    destination ?? pino.destination(2),
  );
}

function codeOf(err: Error): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

export type { Logger };
