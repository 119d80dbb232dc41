/**
 * Numbers a reliability test measured (durations, call counts, kill points), printed as one JSON line when
 * `RELIABILITY_REPORT=1`, for docs/reliability.md; silent otherwise so CI logs stay short.
 */
export function measured(what: string, values: Record<string, unknown>): void {
  if (process.env.RELIABILITY_REPORT !== '1') return;
  process.stdout.write(`${JSON.stringify({ measured: what, ...values })}\n`);
}
