import { z } from 'zod';

/**
 * The one definition of a report slug the connector will put in a URL. The service publishes no format, only
 * that a slug is a URL identifier; a slug comes from CRM users (`report_slug`), the admin and webhooks, so it
 * is checked here before any call: unreserved URL characters only, and a letter or digit first, so `.`, `..`
 * and anything that could leave `/v1/reports/` (slashes, `%` escapes, `?`, `#`) is never sent.
 */

export const SLUG_MAX_LENGTH = 200;
const SLUG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;

/** Why `value` is not a valid slug, as a sentence fragment; null when it is one. */
export function slugProblem(value: string): string | null {
  if (value.length === 0) return 'the report slug is empty';
  if (value.length > SLUG_MAX_LENGTH) return `a report slug has at most ${SLUG_MAX_LENGTH} characters`;
  if (!SLUG_PATTERN.test(value))
    return 'a report slug starts with a letter or digit and holds only letters, digits, ".", "_", "~" and "-"';
  return null;
}

export function isValidSlug(value: string): boolean {
  return slugProblem(value) === null;
}

export const reportSlugSchema = z.string().superRefine((value, ctx) => {
  const problem = slugProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
