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
  '*.headers["x-hubspot-signature-v3"]',
];

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
