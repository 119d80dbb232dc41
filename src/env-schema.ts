import { z } from 'zod';

/**
 * The pieces every environment schema is made of (the application's in config.ts, each provider's own), and
 * the one error they all report: one line naming the variable, so an operator can fix it without reading code.
 */

export interface ConfigProblem {
  variable: string;
  expectation: string;
}

/**
 * The configuration cannot be used. `variable` and `expectation` are the first problem; `problems` lists every
 * one found, so that a person fixes them all in one go rather than one per run.
 */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly problems: readonly ConfigProblem[];
  constructor(
    readonly variable: string,
    readonly expectation: string,
    more: readonly ConfigProblem[] = [],
  ) {
    const problems = [{ variable, expectation }, ...more];
    super(problems.map((p) => `${p.variable} ${p.expectation}`).join('; '));
    this.name = 'ConfigError';
    this.problems = problems;
  }

  /** One error for all of `problems`; throws nothing when there are none. */
  static throwAll(problems: readonly ConfigProblem[]): void {
    const [first, ...rest] = problems;
    if (first) throw new ConfigError(first.variable, first.expectation, rest);
  }
}

export const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/** A URL with one of `protocols` (`'http:'`), or the message. */
export function urlWith(protocols: readonly string[], message: string) {
  return z
    .string()
    .trim()
    .refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, message);
}

export const httpUrl = urlWith(['http:', 'https:'], 'expects an http(s) URL').transform((v) =>
  v.replace(/\/+$/, ''),
);

export const positiveNumber = (what: string) =>
  z.coerce.number({ error: `expects ${what}` }).refine((n) => Number.isFinite(n) && n > 0, `expects ${what}`);

/**
 * Parses the variables `schema` owns out of `env`. Only those are passed to zod, so the error for an unknown
 * variable never happens; the first problem becomes a ConfigError.
 */
export function readEnvSection<S extends z.ZodObject>(
  schema: S,
  env: Readonly<Record<string, string | undefined>>,
): z.output<S> {
  const known = Object.fromEntries(Object.keys(schema.shape).map((k) => [k, env[k]]));
  const parsed = schema.safeParse(known);
  if (!parsed.success) {
    ConfigError.throwAll(
      parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? 'configuration');
        const expectation =
          issue.code === 'invalid_type' && env[variable] === undefined ? 'is required' : issue.message;
        return { variable, expectation };
      }),
    );
  }
  return parsed.data as z.output<S>;
}

/**
 * A comma-separated list of `host:port` (REDIS_CLUSTER_NODES); empty or unset is no list. An IPv6 address is
 * written in brackets (`[::1]:7000`).
 */
export const hostPortList = z
  .string()
  .trim()
  .default('')
  .transform((v, ctx): { host: string; port: number }[] | null => {
    const entries = v
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e.length > 0);
    if (entries.length === 0) return null;
    const nodes = entries.map((e) => /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(e));
    if (nodes.every((m) => m !== null && Number(m[3]) > 0 && Number(m[3]) <= 65535)) {
      return nodes.map((m) => ({ host: (m?.[1] ?? m?.[2])!, port: Number(m?.[3]) }));
    }
    ctx.addIssue({
      code: 'custom',
      message: 'expects a comma-separated list of host:port (10.0.0.5:7000,10.0.0.6:7000)',
    });
    return z.NEVER;
  });

/** `a` set without `b` is a configuration error naming `b`. */
export function requireTogether(a: [string, unknown], b: [string, unknown]): void {
  if (a[1] && !b[1]) throw new ConfigError(b[0], `is required when ${a[0]} is set`);
}
