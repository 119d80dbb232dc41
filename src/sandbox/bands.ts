import { isPlainObject } from './deep-merge.js';

/**
 * The sandbox's band for an overall score: the rule its fixtures were generated with (fixtures/generate-reports.ts
 * writes the same thresholds). A score the sandbox is told to change without a band takes the band of its new
 * score, so that one demo never shows 71 "strong" beside 71.25 "moderate", or keeps "moderate" at 77.7. The odd
 * bands some fixtures carry on purpose ("Tier 2", "STRONG") stay until their score is changed.
 */
export function sandboxBand(overall: number): string {
  if (overall >= 90) return 'exceptional';
  if (overall >= 75) return 'strong';
  if (overall >= 55) return 'moderate';
  return 'weak';
}

/** Whether a patch sets the overall score and leaves the band to the rule. */
export function patchLeavesBand(patch: unknown): boolean {
  return (
    isPlainObject(patch) && isPlainObject(patch.score) && 'overall' in patch.score && !('band' in patch.score)
  );
}
